"""The run folder has one owner (tooltrap.wrappers.eval.run); reports are registered by object; the
generic evaluation code and training import nothing from the layers above them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import tooltrap
from tooltrap.agents import make_agent
from tooltrap.cli import main
from tooltrap.envs.core import Benchmark, EnvUsageError, parse_key_values
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval import report as report_module
from tooltrap.wrappers.eval.report import RateReport, register_report, report_for
from tooltrap.wrappers.eval.run import SUMMARY, read_run_info, read_summary

ROOT = Path(__file__).parents[2]
ENV, TASKS = "SABench-Calendar-v0", "cal-cascade-dependent-*"


def test_a_python_evaluate_call_writes_the_summary_the_cli_writes(tmp_path, capsys):
    evaluate(ENV, make_agent("act-first"), tmp_path / "py", tasks=TASKS, resamples=300)
    argv = ["eval", ENV, "--agent", "act-first", "--tasks", TASKS, "--resamples", "300", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "cli")]) == 0
    written = (tmp_path / "py" / SUMMARY).read_bytes()
    assert written == (tmp_path / "cli" / SUMMARY).read_bytes()
    summary = read_summary(tmp_path / "py")
    assert {"goal", "cd", "system_outcomes"} <= set(summary)
    assert summary["system_outcomes"] == {"n": 0, "by_kind": {}}
    assert read_run_info(tmp_path / "py")["benchmark"] == "sabench"


def test_the_benchmark_base_names_no_report_and_no_protocol_by_string():
    assert not hasattr(Benchmark, "report") and not hasattr(Benchmark, "protocols")
    from tooltrap.envs.episem.benchmark import EpiSEM
    from tooltrap.envs.episem.search import SBMSearch

    assert EpiSEM.protocols == {"sbm": SBMSearch}


def test_the_face_finds_each_built_in_report_by_the_benchmark_name_a_run_records():
    from tooltrap.wrappers.eval.sentry.report import REPORT, SentryReport

    assert isinstance(tooltrap.benchmark_report("sentry"), SentryReport)
    assert tooltrap.benchmark_report("sentry") is REPORT is report_for("sentry")
    for name in tooltrap._registration.REPORT_MODULES:
        assert type(tooltrap.benchmark_report(name)) is not RateReport


def test_a_report_registered_by_object_replaces_the_generic_one(monkeypatch):
    from tests.toybench import LibraryBench

    monkeypatch.setattr(report_module, "_REPORTS", {})
    generic = report_for(LibraryBench)
    assert isinstance(generic, RateReport) and report_for("toylibrary") is generic

    class ToyReport(RateReport):
        cluster_label = "shelf"

    mine = ToyReport("toylibrary", LibraryBench.metrics)
    assert register_report(LibraryBench, mine) is mine
    assert report_for("toylibrary") is mine and report_for(LibraryBench) is mine


def test_key_value_pairs_raise_a_typed_error_below_the_cli(capsys):
    assert parse_key_values(["a=1", "b=x", "a=[2]"], repeat=True) == {"a": [1, [2]], "b": ["x"]}
    with pytest.raises(EnvUsageError, match="--env-arg takes KEY=VALUE"):
        parse_key_values(["oops"])
    # the CLI: one line and the usage status, as argparse's own errors
    assert main(["eval", ENV, "--out", "unused", "--env-arg", "oops"]) == 2
    assert capsys.readouterr().err == "error: --env-arg takes KEY=VALUE, got 'oops'\n"


def _imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


FACE_AND_ABOVE = ("tooltrap.evaluate", "tooltrap.cli", "tooltrap.training")


@pytest.mark.parametrize(
    ("folder", "pattern", "forbidden"),
    [
        # the run package and the report framework sit below the package face, the agents and training
        ("wrappers/eval", "*.py", ("tooltrap.agents", *FACE_AND_ABOVE)),
        # a benchmark's evaluation package (AgentProp's LLM judges still borrow the agents' HTTP client
        # until the shared provider module exists)
        ("wrappers/eval", "*/*.py", FACE_AND_ABOVE),
        # training reaches task selection and KEY=VALUE parsing through the engine, not the face
        ("training", "**/*.py", ("tooltrap.evaluate", "tooltrap.cli")),
    ],
)
def test_no_upward_imports(folder, pattern, forbidden):
    for path in sorted((ROOT / folder).glob(pattern)):
        modules = _imported_modules(path)
        bad = sorted(m for m in modules for f in forbidden if m == f or m.startswith(f + "."))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
        if folder == "wrappers/eval":  # nor the face: `import tooltrap`, `from tooltrap import env_spec`
            face = sorted(m for m in modules if m == "tooltrap" or m.startswith("tooltrap._"))
            assert not face, f"{path.relative_to(ROOT)} imports the package face: {face}"


def test_summary_json_is_written_once_per_protocol_over_its_records(tmp_path):
    from tooltrap.evaluate import evaluate_protocol

    records = evaluate_protocol(
        "EpiSEM-Finance-v0",
        make_agent("careful"),
        tmp_path,
        "sbm",
        tasks="fin-payment-approval-limit-1",
        resamples=200,
    )
    summary = json.loads((tmp_path / SUMMARY).read_text())
    assert records and summary["system_outcomes"]["n"] == 0 and "sbm" in summary
