"""The packaged EpiSEM corpus: the counts the issue names, the packaged files current with the
families, every family valid data, and the protocol's scripted-agent brackets on a sample."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tooltrap.agents import make_agent
from tooltrap.envs.episem import packaged_tasks
from tooltrap.envs.episem.benchmark import DATA_DIR, build_tasks, manifest, render_manifest, render_tasks
from tooltrap.envs.episem.tools import DOMAINS
from tooltrap.evaluate import evaluate_protocol, read_episodes
from tooltrap.wrappers.eval.episem.metrics import per_task_metrics, task_mean, task_table


def test_counts_match_the_paper_inventory():
    counts = manifest()
    assert (counts["families"], counts["pairs"], counts["worlds"]) == (60, 300, 600)
    assert counts["by_domain"] == {d: {"families": 10, "pairs": 50} for d in DOMAINS}
    roles = counts["atoms_by_role"]
    assert 900 <= roles["critical"] <= 980 and 400 <= roles["irrelevant"] <= 440  # paper: 944 and 419
    # the paper's range of critical atoms per task is 2-7, and the corpus has tasks at every size of it
    assert set(counts["tasks_by_n_critical"]) == {str(c) for c in range(2, 8)}
    assert sum(counts["tasks_by_n_critical"].values()) == counts["pairs"]
    assert len(counts["families_by_risk_type"]) >= 30  # the legality fact varies, not just the names


def test_the_readme_inventory_is_the_manifest():
    """The docs' EpiSEM inventory (pairs by critical atoms, atoms by role) is the packaged manifest's,
    as scripts/readme_tables.py writes it, so a rebuilt corpus with stale counts fails here."""
    from scripts._docs import Documents
    from scripts.readme_tables import INVENTORY_END, INVENTORY_START, episem_inventory

    docs = Documents.load()
    assert docs.block(INVENTORY_START, INVENTORY_END) == f"\n{episem_inventory(manifest())}\n", (
        "run: python scripts/readme_tables.py"
    )
    text = docs.texts[docs.holder(INVENTORY_START, INVENTORY_END)]
    by_n = manifest()["tasks_by_n_critical"]
    sizes = sorted(int(n) for n in by_n)
    assert f"{sizes[0]} to {sizes[-1]} critical atoms per pair" in text


def test_packaged_files_are_current_with_the_families():
    tasks = build_tasks()
    assert (DATA_DIR / "tasks.json").read_text(encoding="utf-8") == render_tasks(tasks), (
        "run scripts/build.py episem"
    )
    assert (DATA_DIR / "manifest.json").read_text(encoding="utf-8") == render_manifest(tasks)


def test_every_pair_is_valid_data():
    tasks = list(packaged_tasks())
    assert len({t.id for t in tasks}) == 300
    per_family = Counter(t.family_id for t in tasks)
    assert set(per_family.values()) == {5}
    for task in tasks:
        assert task.data_errors() == [], task.id
        assert all(a.exposures for a in task.atoms), task.id  # every atom lists the fields that show it
        assert task.prohibited("unsafe") and not task.prohibited("safe")
        assert task.instruction and task.policy


#: one domain's 50 pairs: the brackets below already hold there; scripts/episem_baselines.py --check
#: (CI) runs the four agents over all 300
SAMPLE = "fin-*"


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("sbm")
    runs = {}
    for name in ("careful", "trusting", "always-refuse", "recover-then-misact", "stalling"):
        runs[name] = evaluate_protocol("EpiSEM-v0", make_agent(name), out / name, "sbm", tasks=SAMPLE)
    return out, runs


def _metrics(records):
    return {k: task_mean(*v) for k, v in per_task_metrics(task_table(records)).items()}


def test_always_refuse_reaches_the_maximal_sbm_with_no_usefulness(sample_runs):
    _, runs = sample_runs
    refuse = _metrics(runs["always-refuse"])
    assert refuse["sbm"] == 1.0 and refuse["no_boundary"] == 1.0
    assert refuse["full_sws"] == 0.0 and refuse["pur"] == 0.0
    careful = _metrics(runs["careful"])
    assert careful["sbm"] == 1.0 and careful["pur"] == 1.0 and careful["full_sws"] == 1.0
    assert careful["sws_recoverable"] == 1.0 > careful["sws_suppressed"]  # it escalates what it cannot see
    trusting = _metrics(runs["trusting"])
    assert trusting["sbm"] < 1.0 and trusting["critical_ucr"] > 0 and trusting["full_sws"] == 1.0
    assert trusting["irrelevant_ucr_at_1"] == 0.0 < trusting["critical_ucr_at_1"]
    misact = _metrics(runs["recover-then-misact"])
    assert misact["recovery_ucr"] > 0 and misact["recovery_ucr_no_audit"] == 0.0  # it audited every time
    assert misact["pur"] == 0.0


def test_a_stalling_agent_ranks_below_careful_and_no_task_drops_out(sample_runs):
    """Issue 23: re-reading to the step cap instead of escalating used to score SWS 1.0 and drop tasks
    from SBM. Cut rollouts now stay in the denominators: stalling is below careful on SBM and PUR, never
    above it on any SWS column, and every task finishes its search."""
    _, runs = sample_runs
    careful, stalling = _metrics(runs["careful"]), _metrics(runs["stalling"])
    assert stalling["sbm"] < careful["sbm"] and stalling["pur"] < careful["pur"]
    for column in ("full_sws", "sws_suppressed", "sws_recoverable"):
        assert stalling[column] <= careful[column], column
    table = task_table(runs["stalling"])
    assert table.searched.all() and len(table.task_ids) == len(task_table(runs["careful"]).task_ids)
    assert table.n_truncated.sum() > 0


def test_the_protocol_resumes_from_its_ledger_without_duplicates(sample_runs):
    out, runs = sample_runs
    path = out / "careful" / "episodes.jsonl"
    before = path.read_bytes()
    again = evaluate_protocol("EpiSEM-v0", make_agent("careful"), out / "careful", "sbm", tasks=SAMPLE)
    assert path.read_bytes() == before and len(again) == len(runs["careful"])
    keys = [(r["task_id"], json.dumps(r["variant"], sort_keys=True)) for r in read_episodes(path)]
    assert len(keys) == len(set(keys))
    # a crash mid-run: drop the last third of the ledger, the rerun completes it exactly
    lines = before.decode().splitlines(keepends=True)
    path.write_text("".join(lines[: 2 * len(lines) // 3]), encoding="utf-8")
    evaluate_protocol("EpiSEM-v0", make_agent("careful"), out / "careful", "sbm", tasks=SAMPLE)
    assert sorted(path.read_text().splitlines()) == sorted(before.decode().splitlines())
