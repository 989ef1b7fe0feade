"""A run folder is never corrupted: run.json records everything that defines the run and a command for
another run is refused naming the difference (a wider task selection or grid is the same run grown);
no write follows a link out of ``--out``; a record's variant is its trace's."""

from __future__ import annotations

import json
import os

import pytest

from tooltrap.agents import make_agent
from tooltrap.cli import main
from tooltrap.evaluate import (
    EPISODES,
    RUN,
    RunFolderError,
    RunMismatchError,
    evaluate,
    evaluate_protocol,
    read_episodes,
)

EPISEM, TASK = "EpiSEM-Finance-v0", "fin-payment-approval-limit-1"
CAL, CASCADE = "SABench-Calendar-v0", "cal-cascade-dependent-*"


def test_run_json_records_everything_that_defines_the_run(tmp_path):
    evaluate(EPISEM, make_agent("careful"), tmp_path, tasks=TASK, variants=[{"world": "safe"}])
    info = json.loads((tmp_path / RUN).read_text())
    assert {k: info[k] for k in ("env_id", "seed", "env_kwargs", "mitigation", "harness")} == {
        "env_id": EPISEM,
        "seed": 0,
        "env_kwargs": {},
        "mitigation": "none",
        "harness": "native",
    }
    assert info["protocol"] is None and info["tasks"] == TASK and info["variants"] == [{"world": "safe"}]
    assert info["agent"]["name"] == "careful" and info["benchmark"] == "episem"


def test_a_plain_eval_into_a_protocols_folder_is_refused_and_leaves_it_as_it_was(tmp_path, capsys):
    evaluate_protocol(EPISEM, make_agent("careful"), tmp_path, "sbm", tasks=TASK, resamples=50)
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert json.loads(files[RUN])["protocol"] == "sbm"
    argv = ["eval", EPISEM, "--agent", "careful", "--tasks", TASK, "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "protocol: 'sbm' there, none now" in err and "variants" not in err
    assert {
        p.name: p.read_bytes() for p in tmp_path.iterdir()
    } == files  # the ledger and summary as they were
    # and the other way round: a protocol into a plain run's folder
    plain = tmp_path / "plain"
    evaluate(EPISEM, make_agent("careful"), plain, tasks=TASK)
    with pytest.raises(RunMismatchError, match="protocol: none there, 'sbm' now"):
        evaluate_protocol(EPISEM, make_agent("careful"), plain, "sbm", tasks=TASK)
    # the same protocol command resumes
    assert evaluate_protocol(EPISEM, make_agent("careful"), tmp_path, "sbm", tasks=TASK, resamples=50)


def test_a_rerun_may_widen_the_tasks_and_the_grid_but_not_narrow_or_swap_them(tmp_path):
    agent = make_agent("careful")
    first = evaluate(EPISEM, agent, tmp_path, tasks=TASK, variants=[{"world": "safe"}])
    # wider: every earlier point and task is asked for again, and more
    grown = evaluate(EPISEM, agent, tmp_path, tasks=f"{TASK},fin-payment-approval-limit-2",
                     variants=[{"world": "safe"}, {"world": "unsafe"}])  # fmt: skip
    assert len(grown) == 4 * len(first)
    assert json.loads((tmp_path / RUN).read_text())["variants"] == [{"world": "safe"}, {"world": "unsafe"}]
    with pytest.raises(RunMismatchError, match=r"variants: .* \(a rerun may add to variants, never drop"):
        evaluate(EPISEM, agent, tmp_path, tasks=f"{TASK},fin-payment-approval-limit-2",
                 variants=[{"world": "unsafe"}])  # fmt: skip
    with pytest.raises(RunMismatchError, match="tasks: 'fin-payment-approval-limit-1,fin-payment-appr"):
        evaluate(EPISEM, agent, tmp_path, tasks=TASK, variants=[{"world": "safe"}, {"world": "unsafe"}])
    with pytest.raises(RunMismatchError, match="seed: 0 there, 1 now"):
        evaluate(EPISEM, agent, tmp_path, seed=1, tasks=f"{TASK},fin-payment-approval-limit-2",
                 variants=[{"world": "safe"}, {"world": "unsafe"}])  # fmt: skip
    assert len(read_episodes(tmp_path / EPISODES)) == len(grown)  # nothing refused wrote anything


def test_a_run_json_without_the_new_keys_adopts_them(tmp_path):
    """Folders written before run.json recorded the protocol, tasks and grid still resume."""
    evaluate(CAL, make_agent("gold"), tmp_path, tasks=CASCADE)
    info = json.loads((tmp_path / RUN).read_text())
    old = {k: v for k, v in info.items() if k not in ("protocol", "tasks", "variants", "harness")}
    (tmp_path / RUN).write_text(json.dumps(old))
    assert evaluate(CAL, make_agent("gold"), tmp_path, tasks=CASCADE)
    assert json.loads((tmp_path / RUN).read_text()) == info


def test_no_write_follows_a_link_out_of_the_run_folder(tmp_path):
    out, outside = tmp_path / "run", tmp_path / "outside.txt"
    outside.write_text("precious\n")
    evaluate(CAL, make_agent("gold"), out, tasks=CASCADE)
    lines = (out / EPISODES).read_text().splitlines(keepends=True)
    (out / EPISODES).write_text("".join(lines[:-1]) + '{"task_id": "torn')  # the resume rewrites the file
    os.symlink(outside, out / "episodes.jsonl.tmp")  # where the rewrite used to put its temporary copy
    os.symlink(outside, out / "summary.json.tmp")
    assert evaluate(CAL, make_agent("gold"), out, tasks=CASCADE)
    assert outside.read_text() == "precious\n"
    assert len(read_episodes(out / EPISODES)) == len(lines)
    # a link where a run file itself goes is refused, not followed
    (out / EPISODES).unlink()
    os.symlink(outside, out / EPISODES)
    with pytest.raises(RunFolderError, match="symbolic link"):
        evaluate(CAL, make_agent("gold"), out, tasks=CASCADE)
    assert outside.read_text() == "precious\n"


def test_a_record_carries_the_variant_its_trace_played_and_the_point_asked_for(tmp_path):
    (record,) = evaluate("SentryBench-Dispatch-v0", make_agent("careful"), tmp_path, tasks="*-001")[:1]
    assert record["variant"] == record["trace"]["variant"] and record["variant"]["attack"] in ("on", "off")
    assert record["point"] == {}  # the default, as asked: the resume key
    (again,) = evaluate("SentryBench-Dispatch-v0", make_agent("careful"), tmp_path, tasks="*-001")[:1]
    assert again == record  # resumed by its point, not played again
