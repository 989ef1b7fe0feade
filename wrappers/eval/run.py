"""The run folder: the one module that reads and writes what ``tooltrap eval`` leaves in ``--out``.

A run folder holds

* ``episodes.jsonl``: one JSON line per finished episode, appended and flushed as each ends, so an
  interrupted evaluation resumes where it stopped (:class:`EpisodeLog`, :func:`scan_episodes`,
  :func:`prepare_resume`); lines that cannot be read are moved to ``episodes.rejected.jsonl``;
* ``run.json``: what was run (env id, agent, seed, env kwargs, defense, harness) and the benchmark,
  so that a rerun with other settings is refused instead of mixed in (:func:`check_run_file`) and a
  report finds the benchmark of a folder (:func:`read_run_info`);
* ``summary.json``: the headline metrics of the run with their intervals (:func:`write_summary`).

The runner (``tooltrap.evaluate``) and the reports call these functions; nothing else touches the files.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooltrap.envs.core import TooltrapError, variant_key

EPISODES = "episodes.jsonl"
REJECTED = "episodes.rejected.jsonl"
RUN = "run.json"
SUMMARY = "summary.json"

#: one episode record: a line of episodes.jsonl
Record = dict[str, Any]


class RunMismatchError(TooltrapError, ValueError):
    """The output folder holds a run with a different env, agent or seed."""


def record_key(record: Mapping[str, Any]) -> tuple[str, str]:
    """The resume key of an episode record: (task id, canonical JSON of its grid point)."""
    return record["task_id"], variant_key(record.get("variant") or {})


#: characters JSON allows raw inside strings that ``str.splitlines`` (and some JSONL readers) take for
#: line breaks: written as escapes, so one record is always one line for every reader
_LINE_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def json_line(record: Mapping[str, Any]) -> str:
    """One JSONL line. Text a model wrote may hold lone surrogates, which UTF-8 cannot store (the env
    and the agents make what they receive safe, but a record may come from elsewhere): such a record is
    written with ASCII escapes instead (the same JSON value, read back identically). U+2028, U+2029
    and U+0085 are always escaped (:data:`_LINE_BREAKS`)."""
    line = json.dumps(record, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True) + "\n"
    if not line.isascii():
        line = line.translate(_LINE_BREAKS)  # only inside strings: JSON has them nowhere else
    return line + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` so that a crash leaves either the old file or the new one, never a torn one."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


# -- episodes.jsonl ------------------------------------------------------------------------------------
@dataclass
class EpisodeFile:
    """What an episodes.jsonl holds: the readable records, the unreadable lines (line number, text)
    and whether the last line was torn (a crash mid-write)."""

    records: list[Record]
    bad_lines: list[tuple[int, str]]
    torn_tail: bool


def scan_episodes(path: Path) -> EpisodeFile:
    """Read an episodes.jsonl, keeping apart what cannot be read."""
    if not path.exists():
        return EpisodeFile([], [], False)
    data = path.read_bytes()
    torn = bool(data) and not data.endswith(b"\n")
    records, bad = [], []
    lines = data.split(b"\n")
    if torn:
        lines = lines[:-1]
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            bad.append((number, raw.decode("utf-8", "replace")))
            continue
        if isinstance(record, dict) and "task_id" in record:
            records.append(record)
        else:
            bad.append((number, raw.decode("utf-8", "replace")))
    return EpisodeFile(records, bad, torn)


def latest_records(records: Iterable[Record]) -> list[Record]:
    """One record per (task id, variant): the last one written (a retried episode supersedes its
    earlier system-level failure), in the order of their first appearance."""
    by_key: dict[tuple[str, str], Record] = {}
    for record in records:
        key = record_key(record)
        by_key.pop(key, None)
        by_key[key] = record
    return list(by_key.values())


def read_episodes(path: str | Path) -> list[Record]:
    """The records of an episodes.jsonl, one per (task id, variant) (the latest); unreadable lines
    are skipped (``tooltrap eval`` moves them aside when it resumes)."""
    return latest_records(scan_episodes(Path(path)).records)


def prepare_resume(path: Path, found: EpisodeFile, log: Callable[[str], None]) -> list[Record]:
    """Make episodes.jsonl (``found``: as :func:`scan_episodes` read it) safe to append to and return the
    records a rerun keeps.

    Unreadable lines are moved to ``episodes.rejected.jsonl`` (and their episodes run again); episodes
    that ended at the provider (system-level outcomes) are dropped so that they are retried; where a
    (task, variant) was written twice, the latest record stays. The file is rewritten atomically, and
    only when something changes.
    """
    latest = latest_records(found.records)
    kept = [r for r in latest if not r.get("system_outcome")]
    retried = len(latest) - len(kept)
    if found.bad_lines:
        rejected = path.with_name(REJECTED)
        with rejected.open("a", encoding="utf-8") as fh:
            for number, text in found.bad_lines:
                fh.write(json_line({"line": number, "text": text[:10_000]}))
        log(
            f"moved {len(found.bad_lines)} unreadable line(s) of {path} to {rejected}; their episodes run again"
        )
    if retried:
        log(f"retrying {retried} episode(s) that ended at the provider (system-level outcomes)")
    if found.bad_lines or found.torn_tail or len(kept) != len(found.records):
        write_atomic(path, "".join(json_line(r) for r in kept))
    return kept


class EpisodeLog:
    """Appends records to episodes.jsonl durably (the caller serializes concurrent writers).

    Each line is flushed to the operating system at once, so a crashed evaluation loses nothing; the
    file is fsynced at most every :attr:`SYNC_EVERY` seconds (and on close), so a machine crash loses
    at most that much, which the rerun replays (a torn last line is moved aside). Syncing every line
    would cost milliseconds per episode: most of a scripted baseline's time.
    """

    SYNC_EVERY = 0.5

    def __init__(self, path: Path) -> None:
        self.fh = path.open("a", encoding="utf-8")
        self.synced = time.monotonic()

    def append(self, record: Mapping[str, Any]) -> None:
        self.fh.write(json_line(record))
        self.fh.flush()
        if time.monotonic() - self.synced >= self.SYNC_EVERY:
            os.fsync(self.fh.fileno())
            self.synced = time.monotonic()

    def close(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()


# -- run.json ------------------------------------------------------------------------------------------
def read_run_info(directory: str | Path) -> dict[str, Any]:
    """The run.json of a run folder (empty when there is none)."""
    meta = Path(directory) / RUN
    return json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}


def check_run_file(
    run_file: Path,
    identity: dict[str, Any],
    benchmark: str,
    *,
    has_records: bool,
    transport: tuple[str, ...] = (),
) -> None:
    """Refuse to mix runs: an existing run.json must describe the same run (the message names the
    settings that differ). An unreadable run.json (a crash while it was written) is rewritten when the
    folder holds no episodes yet. ``transport``: agent settings that say how the agent is reached
    (a server address), which may change between a run and its resumption."""
    previous: dict[str, Any] | None = None
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
            if not isinstance(previous, dict):
                raise ValueError("not an object")
        except (ValueError, UnicodeDecodeError) as exc:
            if has_records:
                raise RunMismatchError(
                    f"{run_file} is unreadable ({exc}) but the folder holds episodes: delete {run_file} "
                    "to resume them with the current settings, or use another --out."
                ) from None
            previous = None
    if previous is None:
        write_atomic(run_file, json.dumps({**identity, "benchmark": benchmark}, indent=1) + "\n")
        return
    was = {k: previous.get(k, "none" if k == "mitigation" else None) for k in identity}

    def same(key: str) -> bool:
        if key == "agent" and isinstance(was[key], dict):  # how the agent is reached may change
            drop = set(transport)
            return {k: v for k, v in was[key].items() if k not in drop} == {
                k: v for k, v in identity[key].items() if k not in drop
            }
        return was[key] == identity[key]

    differ = [k for k in identity if not same(k)]
    if differ:
        details = "; ".join(f"{k}: {was[k]!r} there, {identity[k]!r} now" for k in differ)
        raise RunMismatchError(
            f"{run_file.parent} holds another run ({details}); use another --out, or the same settings to resume."
        )
    if was["agent"] != identity["agent"]:  # the same agent reached another way: record the new way
        write_atomic(run_file, json.dumps({**previous, "agent": identity["agent"]}, indent=1) + "\n")


def run_name(directory: str | Path) -> str:
    """A run's display name: its agent (and defense) from run.json, else the folder name."""
    directory = Path(directory)
    if not (directory / RUN).exists():
        return directory.name
    info = read_run_info(directory)
    agent = info.get("agent", {}).get("name") or directory.name
    mitigation = info.get("mitigation", "none")
    return f"{agent}+{mitigation}" if mitigation not in (None, "none") else agent


# -- summary.json --------------------------------------------------------------------------------------
def write_summary(directory: str | Path, summary: Mapping[str, Any]) -> Path:
    """Write a run's ``summary.json`` (metric -> interval, and the system-level outcomes)."""
    path = Path(directory) / SUMMARY
    path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return path


def read_summary(directory: str | Path) -> dict[str, Any]:
    """A run's ``summary.json`` as :func:`write_summary` wrote it."""
    return json.loads((Path(directory) / SUMMARY).read_text(encoding="utf-8"))
