"""``tooltrap report`` never runs code a run folder names: an env id of the form ``module:Env-v0`` in
someone's run.json is resolved among the registered ids, and its module is imported only when the user
passes ``--allow-module`` for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tooltrap.agents import make_agent
from tooltrap.evaluate import EPISODES, RUN, evaluate

MODULE = "planted_by_the_folder"


def _report(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # the planted module sits on the child's path: importing it would run it
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "tooltrap", "report", *argv], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_a_run_folder_naming_a_module_runs_none_of_it(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / f"{MODULE}.py").write_text(f"open({str(marker)!r}, 'w').write('code ran')\n")
    run = tmp_path / "run"
    evaluate("SABench-Calendar-v0", make_agent("gold"), run, tasks="cal-cascade-dependent-*")
    info = json.loads((run / RUN).read_text())
    (run / RUN).write_text(json.dumps({**info, "env_id": f"{MODULE}:Evil-v0", "benchmark": None}))
    # records that name no benchmark send the report to the env id for it (runs of older versions)
    lines = [json.loads(line) for line in (run / EPISODES).read_text().splitlines()]
    (run / EPISODES).write_text("".join(json.dumps({**r, "benchmark": None}) + "\n" for r in lines))

    done = _report(str(run), "--out", str(tmp_path / "report"), "--no-figures", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"names the module '{MODULE}'" in done.stderr and f"--allow-module {MODULE}" in done.stderr
    assert not marker.exists() and not (tmp_path / "report").exists()

    # the user's explicit trust imports it (and only then): here it registers nothing, so the id is unknown
    done = _report(str(run), "--out", str(tmp_path / "report"), "--allow-module", MODULE, cwd=tmp_path)
    assert done.returncode == 2 and "Unknown env id 'Evil-v0'" in done.stderr
    assert marker.read_text() == "code ran"


def test_an_unreadable_or_odd_run_json_is_one_line(tmp_path):
    run = tmp_path / "run"
    evaluate("SABench-Calendar-v0", make_agent("gold"), run, tasks="cal-cascade-dependent-*")
    for text, said in (("{", "is unreadable"), ("[1]", "a JSON list, not an object")):
        (run / RUN).write_text(text)
        done = _report(str(run), "--out", str(tmp_path / "r"), "--no-figures", cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
