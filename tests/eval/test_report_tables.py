"""Real reports of the four benchmarks and of a multi-agent env, written by ``tooltrap report`` and read
back: every Markdown table keeps the header's cell count in every row (empty cells stay cells), the
runs are named by their folders (two runs of one agent are not ``agent#2``), metrics.csv speaks one
scope vocabulary, the eval table names the defense, progress prints nothing into a pipe, and the
default output folder never mixes two reports."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tooltrap.cli import main
from tooltrap.wrappers.eval.table import parse_markdown_tables

#: what metrics.csv's scope may say (see :func:`tooltrap.wrappers.eval.report.rates_csv`)
NAMED_SCOPES = {"overall", "system_level", "funnel", "external_only", "pairwise_difference"}


def _eval(*args: str) -> None:
    assert main(["eval", *args, "--resamples", "100", "--quiet"]) == 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Per benchmark, its run folders (small task subsets, several agents and defenses)."""
    root = tmp_path_factory.mktemp("runs")
    out: dict[str, list[Path]] = {}
    sab = [root / "sab-gold", root / "sab-act-first"]
    _eval(
        "SABench-Calendar-v0",
        "--agent",
        "gold",
        "--tasks",
        "cal-cascade-*,cal-ambiguity-*",
        "--out",
        str(sab[0]),
    )
    _eval("SABench-Calendar-v0", "--agent", "act-first", "--tasks", "cal-cascade-*,cal-ambiguity-*",
          "--out", str(sab[1]))  # fmt: skip
    out["sabench"] = sab
    epi = [root / "epi-trusting", root / "epi-careful"]
    for agent, folder in zip(("trusting", "careful"), epi, strict=True):
        _eval(
            "EpiSEM-Finance-v0",
            "--agent",
            agent,
            "--protocol",
            "sbm",
            "--tasks",
            "fin-*-1",
            "--out",
            str(folder),
        )
    out["episem"] = epi
    sentry = [root / f"obedient-{d}" for d in ("none", "tgcc", "caution")]
    for folder, defense in zip(sentry, ("none", "tgcc", "caution"), strict=True):
        _eval("SentryBench-v0", "--agent", "obedient", "--defense", defense, "--out", str(folder))
    out["sentry"] = sentry
    weather = ["AgentProp-Weather-v0", "--tasks", "weather_000[1-4]"]
    injected = ["--variant", "injection=none", "--variant", "injection=type_mismatch", "--variant",
                "injection=semantic_wrong"]  # fmt: skip
    ap = [root / "t1", root / "t1-interceptor", root / "t2", root / "reporting"]
    _eval(*weather, "--agent", "trusting", *injected, "--out", str(ap[0]))
    _eval(*weather, "--agent", "trusting", "--defense", "interceptor", *injected, "--out", str(ap[1]))
    _eval(*weather, "--agent", "trusting", "--out", str(ap[2]))  # no injected episode: a row of empty cells
    _eval(*weather, "--agent", "reporting", "--variant", "injection=semantic_wrong", "--out", str(ap[3]))
    out["agentprop"] = ap
    dialogue = [root / "dialogue-gold", root / "dialogue-act-first"]
    for policy, folder in zip(("gold", "act-first"), dialogue, strict=True):
        _eval(
            "sabench_dialogue_v0", "--agent", f"assistant={policy}", "--tasks", "em-*", "--out", str(folder)
        )
    out["dialogue"] = dialogue
    return out


@pytest.mark.parametrize("benchmark", ["sabench", "episem", "sentry", "agentprop", "dialogue"])
def test_every_table_reads_back_with_the_headers_cell_count(runs, benchmark, tmp_path, capsys):
    folders = runs[benchmark]
    out = tmp_path / "report"
    assert main(["report", *map(str, folders), "--out", str(out), "--resamples", "100"]) == 0
    terminal = capsys.readouterr().out
    markdown = {p.name: p.read_text(encoding="utf-8") for p in out.glob("*.md")}
    assert markdown
    for name, text in markdown.items():
        tables = parse_markdown_tables(text)
        assert tables, name
        for table in tables:
            header = table[0]
            assert all(len(row) == len(header) for row in table), (name, header)
            assert all(header), (name, header)  # a header never has an empty cell
    # runs are named by their folders, in the report and in the terminal
    names = [f.name for f in folders]
    document = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in document["runs"]] == names
    assert all(name[:18] in terminal for name in names)
    # one scope vocabulary: overall, by_<axis>, or a named analysis
    with (out / "metrics.csv").open(encoding="utf-8") as handle:
        scopes = {row["scope"] for row in csv.DictReader(handle)}
    assert "overall" in scopes
    assert all(
        s in NAMED_SCOPES or s.startswith("by_") or s.partition("_by_")[0] in NAMED_SCOPES for s in scopes
    ), scopes


def test_agentprop_tables_keep_their_columns(runs, tmp_path):
    out = tmp_path / "report"
    assert main(["report", *map(str, runs["agentprop"]), "--out", str(out), "--resamples", "100"]) == 0
    text = (out / "agentprop.md").read_text(encoding="utf-8")
    headline, per_injection, paired = parse_markdown_tables(text)
    assert per_injection[0] == ["run", "injection", "p_S1", "p_S2", "r23", "accuracy_injected"]
    rows = {(row[0], row[1]): row for row in per_injection[1:]}
    # every run's type_mismatch numbers sit under type_mismatch; a run without injections has empty cells
    assert ("t1", "type_mismatch") in rows and ("reporting", "type_mismatch") not in rows
    assert rows[("t2", "(no injected episodes)")][2:] == ["", "", "", ""]
    # the interceptor run is paired with the same agent's run without a defense, whatever the folders'
    # names, and the table says what it compares
    assert paired[0][:2] == ["run", "paired with"] and paired[1][:2] == ["t1-interceptor", "t1"]
    assert "Compares each run with the interceptor to its agent's run without a defense" in text
    assert (out / "stages_by_injection.png").exists()


def test_sentry_groups_runs_by_their_agent_not_their_folder(runs, tmp_path):
    out = tmp_path / "report"
    assert main(["report", *map(str, runs["sentry"]), "--out", str(out), "--resamples", "100"]) == 0
    document = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {(r["name"], r["agent"], r["defense"]) for r in document["runs"]} == {
        ("obedient-none", "obedient", "none"),
        ("obedient-tgcc", "obedient", "tgcc"),
        ("obedient-caution", "obedient", "caution"),
    }
    # dominance compares one agent's defenses: the same pairs as for runs named agent+defense
    from tooltrap.wrappers.eval.report import load_records
    from tooltrap.wrappers.eval.sentry.report import REPORT

    records = load_records(runs["sentry"])
    named = REPORT.build(
        {f"obedient+{name.split('-')[1]}": r for name, r in records.items()}, n_resamples=100
    )
    expected = [[f"obedient-{a.split('+')[1]}", f"obedient-{b.split('+')[1]}"] for a, b in named.dominance]
    assert expected and document["dominance"] == expected


def test_two_runs_of_one_agent_keep_their_folder_names(runs, tmp_path):
    """Folders of the same name in different places get their parent folder, not ``#2``."""
    first, second = tmp_path / "a" / "run", tmp_path / "b" / "run"
    for target in (first, second):
        target.mkdir(parents=True)
        for name in ("episodes.jsonl", "run.json"):
            (target / name).write_bytes((runs["sentry"][0] / name).read_bytes())
    out = tmp_path / "report"
    assert (
        main(["report", str(first), str(second), "--out", str(out), "--no-figures", "--resamples", "100"])
        == 0
    )
    document = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in document["runs"]] == ["a/run", "b/run"]


def test_the_default_out_folder_is_never_shared_by_two_reports(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sentry = list(map(str, runs["sentry"]))
    assert main(["report", *sentry, "--no-figures", "--resamples", "100"]) == 0
    assert (tmp_path / "report" / "sentry.md").exists()
    assert main(["report", *sentry, "--no-figures", "--resamples", "100"]) == 0  # the same runs: rewritten
    capsys.readouterr()
    assert main(["report", sentry[0], "--no-figures", "--resamples", "100"]) == 2  # other runs: refused
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "already holds a report of obedient-none" in error and "--out" in error
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "report").mkdir()
    (tmp_path / "elsewhere" / "report" / "notes.txt").write_text("mine")
    assert main(["report", sentry[0], "--no-figures", "--resamples", "100"]) == 2
    assert "files that are no report" in capsys.readouterr().err


def test_the_eval_table_names_the_agent_and_its_defense(tmp_path, capsys):
    _eval("SentryBench-Dispatch-v0", "--agent", "obedient", "--defense", "tgcc", "--out", str(tmp_path / "o"))
    out = capsys.readouterr().out
    assert "obedient + tgcc on SentryBench-Dispatch-v0" in out
    assert "%" in out and "[" in out  # a rate with its interval, as the report shows it


def test_progress_prints_nothing_into_a_pipe(tmp_path, capsys):
    """Without --quiet, into a captured (non-terminal) stdout: no bar and no blank line per SBM round;
    one summary line on stderr."""
    args = ["eval", "EpiSEM-Finance-v0", "--agent", "trusting", "--protocol", "sbm", "--tasks", "fin-*-1"]
    assert main([*args, "--out", str(tmp_path / "e"), "--resamples", "100"]) == 0
    captured = capsys.readouterr()
    assert "" not in [line.strip() for line in captured.out.splitlines()]
    rounds = [line for line in captured.err.splitlines() if "rounds" in line]
    assert len(rounds) == 1 and rounds[0].startswith("sbm: ")
