"""The trust gate's detector over every public dataset copy the SentryBench loaders read, whole: per
dataset its rows, the false alarms (clean rows scored at or above theta) and, on the injection corpora,
the recall; then every clean row that reaches theta.

Usage: python scripts/false_alarms.py sentry [--data DIR] [--skip-missing]

``--data`` (default ``../shared/data/sentry``, see its PROVENANCE.md) is read as the loaders read it:
every Figure Eight folder with :func:`load_disaster_messages` (the Udacity pair and the official splits,
filtered as the paper says), the emergency utterances with :func:`load_emergency_utterances`, and every
other table with :func:`load_payload_rows` (a file none of them can read is named, not scored). Rows are
the distinct texts of a dataset (deepset's parquet and CSV copies hold the same rows).

The gate adds no over-refusal on clean input only if a clean emergency text stays below theta: exit 1
when a disaster message or an emergency utterance reaches it. Benign rows of the jailbreak corpora that
reach it are listed, not failed: jackhhao's benign rows include role-play prompts ("Pretend to be ...")
that a tool result should not carry either. Without ``DIR`` there is nothing to check (exit 0).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    from _results import add_skip_missing, missing_data
except ImportError:  # imported as a module (from the tests)
    from scripts._results import add_skip_missing, missing_data
from tooltrap.envs.sentry.authoring.loaders import (
    DatasetError,
    Row,
    load_disaster_messages,
    load_emergency_utterances,
    load_payload_rows,
)
from tooltrap.wrappers.defenses.detector import THRESHOLD, DetectorReport, injection_score, signals

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "sentry"
TABLES = ("*.csv", "*.parquet", "*.jsonl", "*.json")


@dataclass(frozen=True)
class PublicCopy:
    """A dataset's public copy as the loaders read it. ``emergency``: its rows are genuine emergency
    text (disaster messages, emergency utterances), all clean; else an injection corpus with labels."""

    name: str
    emergency: bool
    rows: list[Row]
    files: list[str]
    unreadable: list[str]


@dataclass(frozen=True)
class Alarm:
    row: Row
    score: float
    signals: list[str]


@dataclass(frozen=True)
class Scan:
    copy: PublicCopy
    report: DetectorReport
    #: the clean rows at or above theta
    alarms: list[Alarm]


def _distinct(rows: list[Row]) -> list[Row]:
    return list({row.text: row for row in reversed(rows)}.values())[::-1]


def public_copies(data: Path, *, emergency_only: bool = False) -> list[PublicCopy]:
    """Every dataset folder under ``data`` as the loaders read it (see the module docstring)."""
    copies = []
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        files = sorted(f for pattern in TABLES for f in folder.rglob(pattern))
        names = [str(f.relative_to(data)) for f in files]
        if folder.name.startswith("figure8_"):  # one table per folder (the Udacity pair is two files)
            copies.append(PublicCopy(folder.name, True, load_disaster_messages(folder), names, []))
            continue
        emergency = folder.name == "emergency_911_calls"
        if emergency_only and not emergency:
            continue
        rows, read, unreadable = [], [], []
        for file, name in zip(files, names, strict=True):
            try:
                rows += load_emergency_utterances(file) if emergency else load_payload_rows(file)
                read.append(name)
            except DatasetError as exc:
                unreadable.append(f"{name} ({exc.message})")
        copies.append(PublicCopy(folder.name, emergency, _distinct(rows), read, unreadable))
    return copies


def scan(copy: PublicCopy, threshold: float = THRESHOLD) -> Scan:
    """The detector over every row of ``copy``: its precision / recall counts and the clean rows it flags."""
    alarms = []
    n_injection = caught = 0
    for row in copy.rows:
        score = injection_score(row.text)
        if row.label == "injection":
            n_injection += 1
            caught += score >= threshold
        elif score >= threshold:
            alarms.append(Alarm(row, score, signals(row.text)))
    n_clean = len(copy.rows) - n_injection
    return Scan(copy, DetectorReport(n_injection, n_clean, caught, len(alarms), threshold), alarms)


def _print(scans: list[Scan]) -> None:
    print(
        f"{'dataset':36} {'kind':9} {'rows':>6} {'clean':>6} {'false alarms':>15} {'injection':>9} {'recall':>15}"
    )
    for s in scans:
        r = s.report
        alarms = f"{r.false_positives} ({100 * r.false_positive_rate:.2f}%)" if r.n_benign else "-"
        recall = f"{r.true_positives} ({100 * r.recall:.1f}%)" if r.n_injection else "-"
        kind = "emergency" if s.copy.emergency else "injection"
        print(f"{s.copy.name:36} {kind:9} {len(s.copy.rows):>6} {r.n_benign:>6} {alarms:>15} {r.n_injection:>9} {recall:>15}")  # fmt: skip
    for s in scans:
        for name in s.copy.unreadable:
            print(f"not read (no loader reads it): {name}")
    for s in scans:
        if s.alarms:
            print(f"\n{s.copy.name}: {len(s.alarms)} clean rows at or above theta = {THRESHOLD:g}")
        for alarm in s.alarms:
            text = " ".join(alarm.row.text.split())
            print(f"  s={alarm.score:g} {','.join(alarm.signals):28} {alarm.row.source}  {text[:110]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=SHARED)
    add_skip_missing(parser)
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        return missing_data(
            "public dataset copies",
            args.data,
            skip=args.skip_missing,
            hint="Give their folder with --data DIR.",
        )
    scans = [scan(copy) for copy in public_copies(args.data)]
    print(
        f"The detector (theta = {THRESHOLD:g}) over every public copy in {args.data} (rows: distinct texts)"
    )
    _print(scans)
    gated = sum(len(s.alarms) for s in scans if s.copy.emergency)
    if gated:
        print(
            f"\n{gated} clean emergency texts reach theta: the gate would hand them to a human",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
