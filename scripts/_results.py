"""What the baseline scripts share: store a result and its figures in docs/ (``--write-docs``) or check
that the stored one is current (``--check``, as CI runs it)."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def baseline_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options every baseline script takes: ``--out DIR`` and ``--write-docs`` or ``--check``
    (the description: the first paragraph of ``doc``, whole)."""
    parser = script_parser(doc)
    parser.add_argument(
        "--out", default=None, help="keep the runs and the report here (default: a temporary folder)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write-docs", action="store_true", help="store the numbers and figures in docs/")
    mode.add_argument("--check", action="store_true", help="exit 1 when the stored numbers are stale")
    return parser


@contextmanager
def run_folder(out: str | None) -> Iterator[Path]:
    """``out``, or a temporary folder removed afterwards."""
    if out is not None:
        yield Path(out)
        return
    tmp = tempfile.mkdtemp()
    try:
        yield Path(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def publish(
    result: Path, text: str, figures: Mapping[Path, Path], *, write: bool, check: bool, script: str
) -> int:
    """Write ``text`` to ``result`` and copy each figure (source -> destination) when ``write``; when
    ``check``, return 1 (and say so) if ``result`` does not hold ``text``. 0 otherwise."""
    if write:
        result.write_text(text, encoding="utf-8")
        for source, destination in figures.items():
            shutil.copy(source, destination)
        print(f"-> {result}")
    if check:
        if not result.exists() or result.read_text(encoding="utf-8") != text:
            print(f"stale: {result} (run python scripts/{script} --write-docs)", file=sys.stderr)
            return 1
        print(f"{result} is current")
    return 0


def write_or_check(target: Path, text: str, *, check: bool, script: str, what: str) -> int:
    """Write a generated file, or (``check``) fail when the file on disk is not ``text``."""
    if check:
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            print(f"stale: {target} (run python scripts/{script})", file=sys.stderr)
            return 1
        print(f"{what}: {target.name} is current")
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"{what} -> {target}")
    return 0


#: the flag that lets a script go on (exit 0) without data it cannot find
SKIP_MISSING = "--skip-missing"


def add_skip_missing(parser: argparse.ArgumentParser) -> None:
    """``--skip-missing``: without it, a script that cannot find its data says so and fails."""
    parser.add_argument(
        SKIP_MISSING,
        action="store_true",
        help="when the data is not on this machine, say so and exit 0 (default: exit 1)",
    )


def missing_data(what: str, path: Path, *, skip: bool, hint: str = "") -> int:
    """Say that ``what`` is not at ``path`` and return the exit status: 0 when told to skip, else 1 (a
    run that did nothing must not pass for one that checked something)."""
    how = f" {hint}" if hint else ""
    if skip:
        print(f"skipped ({SKIP_MISSING}): no {what} at {path}.{how}")
        return 0
    print(
        f"error: no {what} at {path}: nothing was checked.{how} Pass {SKIP_MISSING} to skip it on purpose.",
        file=sys.stderr,
    )
    return 1
