"""The run folder: the one module that reads and writes what ``tooltrap eval`` leaves in ``--out``.

A run folder holds

* ``episodes.jsonl``: one JSON line per finished episode, appended and flushed as each ends, so an
  interrupted evaluation resumes where it stopped (:class:`EpisodeLog`, :func:`scan_episodes`,
  :func:`prepare_resume`); lines that cannot be read are moved to ``episodes.rejected.jsonl``;
* ``run.json``: everything that defines the run (env id, agent, seed, env kwargs, defense, harness,
  protocol, task selection, variant grid) and the benchmark, so that a rerun with other settings is
  refused instead of mixed in (:func:`check_run_file`) and a report finds the benchmark of a folder
  (:func:`read_run_info`);
* ``summary.json``: the headline metrics of the run with their intervals (:func:`write_summary`).

The runner (``tooltrap.evaluate``) and the reports call these functions; nothing else touches the files.
Nothing is written through a symbolic link, and temporary files are created exclusively under random
names (:func:`write_atomic`): a folder someone else prepared cannot redirect a write outside it.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
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


#: files a ``tooltrap report`` folder holds and a run folder never does by itself
REPORT_MARKERS = ("report.json", "metrics.csv")


class RunFolderError(TooltrapError, ValueError):
    """``--out`` cannot hold this run: a file, a report folder, a symbolic link where a run file goes."""


class RunMismatchError(RunFolderError):
    """The output folder holds another run (another env, agent, seed, protocol, grid ...)."""


def record_point(record: Mapping[str, Any]) -> dict[str, Any]:
    """The grid point an episode record was played for, as asked (``point``); records written before
    records carried it hold the point in ``variant``."""
    if "point" in record:
        return dict(record["point"] or {})
    return dict(record.get("variant") or {})


def record_key(record: Mapping[str, Any]) -> tuple[str, str]:
    """The resume key of an episode record: (task id, canonical JSON of its grid point)."""
    return record["task_id"], variant_key(record_point(record))


def check_out_dir(out: Path) -> None:
    """Refuse an ``--out`` that cannot be a run folder: an existing file, or a folder that holds a
    ``tooltrap report`` (report.json, metrics.csv) and no run."""
    if out.exists() and not out.is_dir():
        raise RunFolderError(f"--out {out} is a file, not a folder: give a new or existing run folder.")
    if out.is_dir() and not (out / RUN).exists() and not (out / EPISODES).exists():
        found = [name for name in REPORT_MARKERS if (out / name).exists()]
        if found:
            raise RunFolderError(
                f"--out {out} holds a report ({', '.join(found)}), not a run: give the run its own folder."
            )


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise RunFolderError(
            f"{path} is a symbolic link: a run folder's files are never followed out of it; "
            "replace the link with the file, or use another --out."
        )


def open_append(path: Path) -> Any:
    """``path`` opened for appending text, created if missing, never through a symbolic link."""
    _refuse_link(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if path.is_symlink():  # made a link between the check and the open
            _refuse_link(path)
        raise RunFolderError(f"cannot append to {path}: {exc.strerror}") from None
    return os.fdopen(fd, "a", encoding="utf-8")


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
    """Write ``text`` so that a crash leaves either the old file or the new one, never a torn one.

    The temporary file beside ``path`` is created exclusively under a random name (``mkstemp``: never
    an existing file or a link someone planted), and the rename replaces a link at ``path`` itself
    rather than writing where it points."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            mode = path.lstat().st_mode
            os.fchmod(fd, stat.S_IMODE(mode) if stat.S_ISREG(mode) else 0o644)
        except FileNotFoundError:
            os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide the run from the user's other tools
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:  # Ctrl-C or a full disk: leave the old file and no temporary one
        Path(tmp).unlink(missing_ok=True)
        raise


# -- episodes.jsonl ------------------------------------------------------------------------------------
@dataclass
class EpisodeFile:
    """What an episodes.jsonl holds: the readable records, the unreadable lines (line number, text)
    and whether the last line was torn (a crash mid-write)."""

    records: list[Record]
    bad_lines: list[tuple[int, str]]
    torn_tail: bool


def scan_episodes(path: Path) -> EpisodeFile:
    """Read an episodes.jsonl, keeping apart what cannot be read (a symbolic link is refused)."""
    _refuse_link(path)
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
        with open_append(rejected) as fh:
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
        self.fh = open_append(path)
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
#: what a run.json written before a setting was recorded means by its absence
LEGACY_DEFAULTS: dict[str, Any] = {"mitigation": "none", "harness": "native"}


def read_run_info(directory: str | Path) -> dict[str, Any]:
    """The run.json of a run folder (empty when there is none).

    Raises:
        RunFolderError: run.json is not a readable JSON object.
    """
    meta = Path(directory) / RUN
    if not meta.exists():
        return {}
    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise RunFolderError(f"{meta} is unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(info, dict):
        raise RunFolderError(f"{meta} is unreadable (a JSON {type(info).__name__}, not an object)")
    return info


def _shown(value: Any) -> str:
    return "none" if value is None else repr(value)


def check_run_file(
    run_file: Path,
    identity: dict[str, Any],
    benchmark: str,
    *,
    has_records: bool,
    transport: tuple[str, ...] = (),
    grows: Mapping[str, Callable[[Any, Any], bool]] | None = None,
) -> None:
    """Refuse to mix runs: an existing run.json must describe the same run (the message names the
    settings that differ). An unreadable run.json (a crash while it was written) is rewritten when the
    folder holds no episodes yet.

    Args:
        run_file: The folder's run.json.
        identity: Everything that defines the run, as it is asked for now.
        benchmark: The benchmark's name (recorded for reports).
        has_records: Whether the folder holds episodes.
        transport: Agent settings that say how the agent is reached (a server address), which may
            change between a run and its resumption.
        grows: Settings a rerun may widen (the task selection, the variant grid): key ->
            ``covers(recorded, now)``, true when ``now`` asks for everything ``recorded`` did. The
            recorded value is then replaced by the wider one.

    Keys a run.json written by an older version lacks are adopted (the run's value is unknown),
    except those with a documented default (:data:`LEGACY_DEFAULTS`).
    """
    previous: dict[str, Any] | None = None
    if run_file.exists() or run_file.is_symlink():
        try:
            previous = read_run_info(run_file.parent)
        except RunFolderError as exc:
            if has_records:
                raise RunMismatchError(
                    f"{exc} but the folder holds episodes: delete {run_file} "
                    "to resume them with the current settings, or use another --out."
                ) from None
            previous = None
    if previous is None:
        write_atomic(run_file, json.dumps({**identity, "benchmark": benchmark}, indent=1) + "\n")
        return
    grows = grows or {}
    recorded = {
        k: previous.get(k, LEGACY_DEFAULTS.get(k)) for k in identity if k in previous or k in LEGACY_DEFAULTS
    }

    def same(key: str) -> bool:
        was, now = recorded[key], identity[key]
        if key == "agent" and isinstance(was, dict):  # how the agent is reached may change
            drop = set(transport)
            return {k: v for k, v in was.items() if k not in drop} == {
                k: v for k, v in now.items() if k not in drop
            }
        if key in grows and was != now:
            try:
                return grows[key](was, now)
            except (TypeError, ValueError, KeyError, TooltrapError):  # a recorded value of another shape
                return False
        return was == now

    differ = [k for k in recorded if not same(k)]
    # another protocol means another grid: naming the grid too would only repeat it
    differ = [k for k in differ if not (k == "variants" and "protocol" in differ)]
    if differ:
        details = "; ".join(f"{k}: {_shown(recorded[k])} there, {_shown(identity[k])} now" for k in differ)
        widen = (
            f" (a rerun may add to {' and '.join(k for k in grows if k in differ)}, never drop any)"
            if any(k in grows for k in differ)
            else ""
        )
        raise RunMismatchError(
            f"{run_file.parent} holds another run ({details}){widen}; use another --out, "
            "or the same settings to resume."
        )
    updated = {**previous, **identity}
    if updated != previous:  # the agent reached another way, a wider grid, settings recorded at last
        write_atomic(run_file, json.dumps(updated, indent=1) + "\n")


def run_identity(directory: str | Path) -> tuple[str, str]:
    """(agent, defense) of a run folder, from its run.json (the defense ``none`` when it had none);
    without run.json the folder's name stands for the agent."""
    directory = Path(directory)
    if not (directory / RUN).exists():
        return directory.name, "none"
    info = read_run_info(directory)
    agent = info.get("agent")
    name = agent.get("name") if isinstance(agent, dict) else None
    mitigation = info.get("mitigation")
    return (
        name if isinstance(name, str) and name else directory.name,
        mitigation if isinstance(mitigation, str) and mitigation else "none",
    )


def folder_names(directories: Sequence[str | Path]) -> list[str]:
    """A unique display name per run folder: its folder's name, with as many parent folders as it takes
    to tell apart folders of the same name (``a/run``, ``b/run``); the same folder given twice gets
    ``#2``."""
    paths = [Path(d).resolve() for d in directories]
    depth = [1] * len(paths)

    def name(i: int) -> str:
        return "/".join(paths[i].parts[-depth[i] :])

    while True:
        names = [name(i) for i in range(len(paths))]
        clash = [i for i, n in enumerate(names) if names.count(n) > 1 and depth[i] < len(paths[i].parts)]
        clash = [i for i in clash if len({paths[j] for j, m in enumerate(names) if m == names[i]}) > 1]
        if not clash:
            break
        for i in clash:
            depth[i] += 1
    out: list[str] = []
    for n in names:
        unique, k = n, 2
        while unique in out:
            unique, k = f"{n}#{k}", k + 1
        out.append(unique)
    return out


# -- summary.json --------------------------------------------------------------------------------------
def write_summary(directory: str | Path, summary: Mapping[str, Any]) -> Path:
    """Write a run's ``summary.json`` (metric -> interval, and the system-level outcomes)."""
    path = Path(directory) / SUMMARY
    write_atomic(path, json.dumps(summary, indent=1) + "\n")
    return path


def read_summary(directory: str | Path) -> dict[str, Any]:
    """A run's ``summary.json`` as :func:`write_summary` wrote it."""
    return json.loads((Path(directory) / SUMMARY).read_text(encoding="utf-8"))
