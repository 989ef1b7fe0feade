"""Every script's ``--help`` prints a whole, readable description: the first paragraph of its docstring
(never its first line cut mid-sentence), and exits 0 without doing the script's work. The benchmark
scripts are reached the way a user reaches them: ``scripts/VERB.py BENCHMARK --help``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
#: the verb scripts' dispatch runs the benchmark's own script (scripts/_verbs.py)
VERBS = sorted(
    p.stem for p in SCRIPTS.glob("[a-z]*.py") if "from _verbs import run" in p.read_text(encoding="utf-8")
)


def _first_paragraph(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _help(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "COLUMNS": "10000"},  # argparse wraps at hyphens: held-out -> "held- out"
    )
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


CASES = [
    *((p,) for p in sorted(SCRIPTS.glob("[a-z]*.py")) if p.stem not in VERBS),
    *((SCRIPTS / f"{p.stem}.py", p.parent.name, p) for p in sorted(SCRIPTS.glob("benchmarks/*/*.py"))),
    *((SCRIPTS / f"{verb}.py",) for verb in VERBS),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: " ".join(Path(str(c)).stem if i == 0 else str(c)
                                                                      for i, c in enumerate(case[:2])))  # fmt: skip
def test_help_prints_the_whole_first_paragraph(case: tuple) -> None:
    script, *rest = case
    source = rest[1] if len(rest) == 2 else script
    described = _first_paragraph(source)
    assert described.endswith((".", ")")), f"{source}: its first paragraph stops mid-sentence"
    shown = _help(str(script.relative_to(ROOT)), *rest[:1])
    assert described.replace("``", "").replace("`", "") in shown.replace("``", "").replace("`", "")
