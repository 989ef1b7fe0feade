"""``tooltrap view``'s builder without a browser: byte-identical sites, the output folder's rules, an
untrusted run folder (broken lines, huge and odd fields, no run.json) that builds without crashing,
bounded pages, the generic view of a benchmark without hooks, escaping by construction, and the typed
error without Jinja2."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tooltrap.agents import make_agent
from tooltrap.cli import main
from tooltrap.envs.core import EnvUsageError
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval.run import EPISODES, RUN, SUMMARY, read_episodes
from tooltrap.wrappers.eval.view import MARKER, ViewHooks, build_site, read_run
from tooltrap.wrappers.eval.view.build import STRING_CAP, episode_file

pytest.importorskip("jinja2", reason="the view extra (Jinja2) is not installed")

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "wrappers" / "eval" / "view" / "templates"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for name, agent in (("act", "act-first"), ("gold", "gold")):
        made[name] = root / name
        evaluate("SABench-Calendar-v0", make_agent(agent), made[name], tasks="cal-*-01", resamples=50)
    return made


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_runs_build_byte_identical_sites(runs, tmp_path):
    dirs = [str(runs["act"]), str(runs["gold"])]
    assert main(["view", *dirs, "--out", str(tmp_path / "a")]) == 0
    assert main(["view", *dirs, "--out", str(tmp_path / "b")]) == 0
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b
    n = len(read_episodes(runs["act"] / EPISODES))
    assert sum(1 for k in a if k.startswith("runs/01-act/e/")) == n
    assert sum(1 for k in a if k.startswith("compare/01-sabench/t/")) == n
    # nothing on a page points off disk: no scheme, no protocol-relative URL
    for name, data in a.items():
        if name.endswith(".html"):
            text = data.decode()
            assert not re.search(r"""(src|href)=["']?(https?:|//|data:)""", text), name
            assert 'http-equiv="Content-Security-Policy"' in text


def test_the_output_folder_is_new_empty_or_a_previous_view(runs, tmp_path, capsys):
    run = str(runs["act"])
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert main(["view", run, "--out", str(busy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not empty" in err and (busy / "notes.txt").read_text() == "mine"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["view", run, "--out", str(a_file)]) == 2
    assert "is a file" in capsys.readouterr().err
    link = tmp_path / "link"
    link.symlink_to(busy)
    assert main(["view", run, "--out", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    # a previous view is replaced whole (a page of a run no longer given goes)
    site = tmp_path / "site"
    assert main(["view", run, str(runs["gold"]), "--out", str(site)]) == 0
    assert (site / MARKER).exists() and (site / "compare").is_dir()
    assert main(["view", run, "--out", str(site)]) == 0
    assert not (site / "compare").exists() and not (site / "runs" / "02-gold").exists()


def test_misuse_is_one_line_with_status_2(runs, tmp_path, capsys):
    for argv in (["view", str(tmp_path / "missing")], ["view", str(tmp_path)]):
        assert main([*argv, "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
    with pytest.raises(SystemExit) as exc:
        main(["view"])
    assert exc.value.code == 2


def test_an_untrusted_run_folder_builds_with_its_oddities_shown_or_skipped(runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(runs["act"], run)
    lines = [json.loads(line) for line in (run / EPISODES).read_text().splitlines()]
    huge = "A" * (STRING_CAP * 50)
    lines[0]["instruction"] = huge
    lines[0]["trace"]["steps"][0]["raw"] = huge
    lines[1]["trace"] = "not a trace"
    lines[1]["verdict"] = ["not", "a", "verdict"]
    lines[1]["reward"] = "NaN"
    lines[2]["trace"]["steps"] = [{"calls": [{"index": "x", "writes": "no"}, 7]}, None]
    lines[3]["reward_components"] = {"goal": {"deep": [1, 2]}}
    text = "".join(json.dumps(r) + "\n" for r in lines)
    (run / EPISODES).write_text(text + '{"task_id": "broken line\n' + "[1, 2]\n")
    (run / RUN).unlink()
    (run / SUMMARY).write_text("{ not json")
    site = tmp_path / "site"
    assert main(["view", str(run), "--out", str(site)]) == 0
    pages = sorted((site / "runs").glob("*/e/*.html"))
    assert len(pages) == len(lines)  # the broken lines are skipped, every readable record has a page
    first = (site / "runs").glob(f"*/e/{episode_file(lines[0])}")
    html = next(iter(first)).read_text()
    assert f"cut: {len(huge):,} characters, the first {STRING_CAP:,} shown" in html
    assert len(html) < 6 * STRING_CAP  # bounded: the instruction and the raw reply are cut
    index = next((site / "runs").glob("*/index.html")).read_text()
    assert "summary.json is unreadable" in index


def test_a_benchmark_without_hooks_gets_the_generic_view(runs, tmp_path):
    run = read_run(runs["act"])  # no report found: the generic hooks
    run.report = None
    hooks = ViewHooks()
    outcomes = [o.field for o in hooks.outcome_columns(run.records)]
    assert "goal" in outcomes and "cd" in outcomes and "ambiguous" not in outcomes  # a label, not an outcome
    assert "trap_family" in hooks.label_fields(run.records)
    build_site([run], tmp_path / "site")
    index = next((tmp_path / "site" / "runs").glob("*/index.html")).read_text()
    assert '"label": "cd"' in index or '"label":"cd"' in index


def test_templates_escape_everything_by_construction():
    """Autoescaping is on for every template, and no template marks data safe: the only JSON written
    into a page goes through Jinja's ``tojson`` (which escapes <, >, & and ')."""
    from tooltrap.wrappers.eval.view.build import _jinja

    env = _jinja()
    for path in TEMPLATES.glob("*.j2"):
        source = path.read_text()
        assert "|safe" not in source.replace(" ", "") and "Markup" not in source, path.name
        assert "autoescape false" not in source, path.name
        assert env.autoescape(path.name) if callable(env.autoescape) else env.autoescape, path.name
    js = (ROOT / "wrappers" / "eval" / "view" / "static" / "table.js").read_text()
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "eval(" not in js


def test_without_jinja2_a_typed_error_names_the_extra(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(EnvUsageError, match=r"tooltrap\[view\]"):
        build_site([read_run(runs["act"])], tmp_path / "site")
    assert not (tmp_path / "site").exists()  # refused before anything was written
    assert main(["view", str(runs["act"]), "--out", str(tmp_path / "site")]) == 2
    assert "pip install 'tooltrap[view]'" in capsys.readouterr().err
