"""The site builder of ``tooltrap view`` (see the package docs): run folders in, static HTML out.

Layout of the site (``OUT``):

* ``index.html``: the runs and the comparisons;
* ``runs/NN-NAME/index.html``: one run's summary and episodes; ``runs/NN-NAME/e/TASK-HASH.html``: one
  page per episode;
* ``compare/NN-BENCHMARK/index.html``: the runs of one benchmark task by task;
  ``compare/NN-BENCHMARK/t/HASH.html``: one task side by side;
* ``static/``: the style sheet and the index's script; ``.tooltrap-view``: the marker that lets a
  later build replace this site (a non-empty folder without it is refused).

A run folder is untrusted input: unreadable lines are skipped (as every reader of the folder does), a
field of the wrong shape shows as empty, a huge string is cut (its full length noted), a huge episode
shows its first turns. Nothing depends on the clock or on where the runs are: the same runs give the
same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from tooltrap.envs.core import EnvUsageError, TooltrapError, variant_key

from ..report import run_benchmark
from ..run import (
    EPISODES,
    RUN,
    SUMMARY,
    Record,
    RunFolderError,
    folder_names,
    read_episodes,
    read_run_info,
    read_summary,
    record_point,
)
from ..transcript import as_dict, as_list, field_changes, transcript
from .hooks import (
    RECORD_FIELDS,
    SECTION_FIELDS,
    Finding,
    Outcome,
    ViewHooks,
    call_records,
    hooks_of,
    shown_value,
)

#: the file that marks a folder as a site this builder wrote (a rebuild may replace it)
MARKER = ".tooltrap-view"
#: what a build writes at the top of its folder (all of it replaced by a rebuild)
SITE_ENTRIES = ("index.html", "runs", "compare", "static", MARKER)
#: the longest string a page shows whole (characters); longer ones are cut, their length noted
STRING_CAP = 20_000
#: the most turns, calls per turn and changes per write an episode page shows
MAX_TURNS = 400
MAX_REPLIES = 100
MAX_WRITES = 100
MAX_CHANGES = 200
#: the most runs a site takes (a comparison page shows them side by side)
MAX_RUNS = 50


class ViewFolderError(TooltrapError, ValueError):
    """The output folder cannot take the site: a file, a link, or a non-empty folder that is not a
    previous view."""


@dataclass
class ViewRun:
    """One run folder as the viewer reads it.

    Attributes:
        directory: The run folder.
        name: Its display name (its folder's name, as ``tooltrap report`` names runs: :func:`~..run.folder_names`).
        info: Its run.json.
        records: Its episode records (the latest per task and grid point).
        summary: Its summary.json (empty when missing or unreadable).
        benchmark: The benchmark's name (as the records and run.json name it).
        report: The benchmark's report object (its ``view`` hooks), or None (the generic view).
        notes: What the reader had to skip or could not read, in sentences.
    """

    directory: Path
    name: str
    info: dict[str, Any]
    records: list[Record]
    summary: dict[str, Any]
    benchmark: str
    report: Any = None
    notes: list[str] = field(default_factory=list)


def read_run(directory: str | Path, find_report: Callable[[str, str | None], Any] | None = None) -> ViewRun:
    """Read one run folder for the viewer.

    Args:
        directory: A folder written by ``tooltrap eval``.
        find_report: ``(benchmark, env id) -> report object`` (the face's
            ``tooltrap.benchmark_report``, which imports the benchmark's evaluation package); None:
            the report registered for the benchmark, if any.

    Raises:
        RunFolderError: Not a run folder, run.json unreadable, or no readable episode.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise RunFolderError(f"{directory} is not a folder: give a run folder written by tooltrap eval.")
    if not (directory / RUN).exists() and not (directory / EPISODES).exists():
        raise RunFolderError(
            f"{directory} has no {RUN} or {EPISODES}: not a run folder written by tooltrap eval."
        )
    info = read_run_info(directory)
    records = [r for r in read_episodes(directory / EPISODES) if isinstance(r, dict)]
    if not records:
        raise RunFolderError(f"{directory}: no readable episode in {EPISODES}; nothing to show.")
    notes = []
    summary: dict[str, Any] = {}
    if (directory / SUMMARY).exists():
        try:
            summary = as_dict(read_summary(directory))
        except (OSError, ValueError, RecursionError) as exc:
            notes.append(f"{SUMMARY} is unreadable ({type(exc).__name__}); the summary is not shown")
    try:
        benchmark, env_id = run_benchmark(directory, records)
    except (EnvUsageError, RunFolderError) as exc:
        named = info.get("benchmark")
        benchmark, env_id = (named if isinstance(named, str) and named else "unknown"), None
        notes.append(f"the benchmark could not be resolved ({exc}); the generic view is shown")
    report = None
    if find_report is not None:
        try:
            report = find_report(benchmark, env_id)
        except (TooltrapError, ImportError, LookupError) as exc:
            notes.append(f"no report for {benchmark!r} ({type(exc).__name__}); the generic view is shown")
    else:
        from ..report import _REPORTS

        report = _REPORTS.get(benchmark)
    return ViewRun(directory, directory.name, info, records, summary, benchmark, report, notes)


# -- small pure helpers ----------------------------------------------------------------------------------
_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str, limit: int = 48) -> str:
    """A file-name-safe form of ``text`` (lower-case letters, digits and ``-``; never empty)."""
    return _SLUG.sub("-", str(text).lower()).strip("-")[:limit].strip("-") or "x"


def digest(*parts: Any) -> str:
    """A short hash of ``parts`` (file names that stay distinct when slugs collide)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:10]


@dataclass(frozen=True)
class Text:
    """A string as a page shows it: at most :data:`STRING_CAP` characters, with the full length when
    it was cut."""

    text: str
    full: int = 0

    @property
    def cut(self) -> bool:
        return self.full > len(self.text)


def capped(text: str, limit: int = STRING_CAP) -> Text:
    """``text`` cut to ``limit`` characters (:class:`Text` notes the full length)."""
    return Text(text[:limit], len(text)) if len(text) > limit else Text(text)


def pretty(value: Any, limit: int = STRING_CAP) -> Text:
    """A JSON value as indented text, cut to ``limit`` characters; a string as itself."""
    if isinstance(value, str):
        return capped(value, limit)
    try:
        text = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # a cycle cannot come from JSON; a deep nest can
        text = repr(value)
    return capped(text, limit)


def short(value: Any, limit: int = 160) -> str:
    """A one-line form of a value (compact JSON), cut to ``limit`` characters."""
    text = value if isinstance(value, str) else shown_value(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number(value: Any) -> float | None:
    """A finite number, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def flag(value: Any) -> int | None:
    """An outcome's value as the index stores it: 1, 0, or None (not applicable)."""
    return None if not isinstance(value, bool) else int(value)


def variant_label(record: Mapping[str, Any]) -> str:
    """The variant an episode played, as ``key=value`` pairs (``default`` when it has none)."""
    variant = as_dict(record.get("variant")) or record_point(record)
    if not variant:
        return "default"
    return ", ".join(f"{k}={short(v, 60)}" for k, v in sorted(variant.items()))


def label_value(record: Mapping[str, Any], name: str) -> str:
    """A label of an episode: the record's field, else the verdict's (empty when neither has it)."""
    value = record[name] if name in record else as_dict(record.get("verdict")).get(name)
    return "" if value is None else short(value, 80)


def system_outcome(record: Mapping[str, Any]) -> str:
    """Why an episode has no model-level result (the provider's outcome, or ``void`` for a simulator
    failure); empty when it has one."""
    outcome = record.get("system_outcome")
    if outcome:
        return short(outcome, 60)
    return "void" if record.get("void") is True else ""


def task_of(record: Mapping[str, Any]) -> str:
    return short(record.get("task_id"), 200)


def episode_file(record: Mapping[str, Any]) -> str:
    """The file name of an episode's page: its task id as a slug and a hash of (task id, grid point)."""
    task = str(record.get("task_id"))
    return f"{slug(task)}-{digest(task, variant_key(record_point(record)))}.html"


def compare_key(record: Mapping[str, Any]) -> tuple[str, str]:
    """What makes two runs' episodes the same task: the task id and the variant played."""
    variant = as_dict(record.get("variant")) or record_point(record)
    try:
        key = variant_key(variant)
    except (TypeError, ValueError):
        key = shown_value(variant)
    return str(record.get("task_id")), key


# -- the Jinja environment ----------------------------------------------------------------------------------
def _jinja() -> Any:
    """The template environment (autoescaping every template), or a typed error naming the extra."""
    try:
        import jinja2
    except ModuleNotFoundError as exc:
        if exc.name != "jinja2":
            raise
        raise EnvUsageError("tooltrap view needs Jinja2: pip install 'tooltrap[view]'.") from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__name__.rpartition(".")[0], "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = _pct
    env.filters["num"] = _num
    return env


def _pct(value: Any) -> str:
    v = number(value)
    return "-" if v is None else f"{100 * v:.1f}%"


def _num(value: Any) -> str:
    v = number(value)
    if v is None:
        return "-"
    v += 0.0  # -0.0 (a weight times zero) reads as 0
    return f"{v:+.3f}" if v != int(v) or abs(v) < 1000 else f"{v:,.0f}"


# -- one episode --------------------------------------------------------------------------------------------
def _write_view(write: Mapping[str, Any]) -> dict[str, Any]:
    changes = field_changes(write)
    return {
        "entity": short(write.get("entity"), 200),
        "action": short(write.get("action"), 40),
        "tool": short(write.get("tool"), 80),
        "domain": short(write.get("domain"), 80),
        "external": write.get("external") is True,
        "changes": [
            {
                "name": short(c.name, 120),
                "op": c.op,
                "before": pretty(c.before, 4000),
                "after": pretty(c.after, 4000),
            }
            for c in changes[:MAX_CHANGES]
        ],
        "more_changes": max(0, len(changes) - MAX_CHANGES),
    }


def _trace_findings(record: Mapping[str, Any]) -> list[Finding]:
    """What the trace itself records against the episode, for every benchmark: invalid calls with their
    error, calls a hook intercepted, endings a hook overrode, a truncation."""
    out = []
    for call in call_records(record):
        error = as_dict(call.get("error"))
        index = call.get("index")
        calls = (index,) if isinstance(index, int) and not isinstance(index, bool) else ()
        if call.get("ok") is not True and error.get("type") != "not_executed":
            out.append(
                Finding(
                    "invalid_call",
                    f"{short(error.get('type'), 60)}: {short(error.get('message'), 300)}",
                    calls,
                )
            )
    trace = as_dict(record.get("trace"))
    if trace.get("truncated"):
        out.append(Finding("truncated", f"the episode was cut: {short(trace.get('truncated'), 80)}"))
    return out


def _variant_notes(record: Mapping[str, Any], hooks: ViewHooks) -> list[dict[str, Any]]:
    """What the variant hid or changed: the hooks' sentences, then what the trace recorded (fields a hook
    hid from a result, calls a hook rewrote or answered, endings it overrode)."""
    notes: list[dict[str, Any]] = [{"text": short(t, 600), "call": None} for t in hooks.variant_notes(record)]
    for call in call_records(record):
        index = call.get("index")
        hidden = as_list(call.get("hidden"))
        if hidden:
            notes.append(
                {
                    "text": f"hid {', '.join(short(h, 80) for h in hidden[:20])} from the result of {short(call.get('name'), 80)}",
                    "call": index,
                }
            )
        for rewrite in map(as_dict, as_list(call.get("rewrites"))):
            notes.append(
                {
                    "text": f"a hook ({short(rewrite.get('kind'), 40)}) rewrote {short(call.get('sent_name'), 80)} before it ran: {short(rewrite.get('reason'), 300)}",
                    "call": index,
                }
            )
        intercept = as_dict(call.get("intercept"))
        if intercept:
            notes.append(
                {
                    "text": f"a hook ({short(intercept.get('kind'), 40)}) answered {short(call.get('name'), 80)} without running it: {short(intercept.get('reason'), 300)}",
                    "call": index,
                }
            )
    for override in map(as_dict, as_list(as_dict(record.get("trace")).get("overrides"))):
        notes.append(
            {
                "text": f"a hook ({short(override.get('kind'), 40)}) changed the ending from {short(override.get('from'), 40)} to {short(override.get('to'), 40)}: {short(override.get('reason'), 300)}",
                "call": None,
            }
        )
    return notes


def _components(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reward components: one table, or one per role (a multi-agent episode)."""
    components = as_dict(record.get("reward_components"))
    rewards = as_dict(record.get("rewards"))
    if rewards and all(isinstance(v, dict) for v in components.values()):
        return [
            {
                "role": short(role, 60),
                "total": number(rewards.get(role)),
                "items": [(short(k, 80), number(v)) for k, v in as_dict(components.get(role)).items()],
            }
            for role in rewards
        ]
    return [
        {
            "role": "",
            "total": number(record.get("reward")),
            "items": [(short(k, 80), number(v)) for k, v in components.items()],
        }
    ]


def episode_context(
    run: ViewRun, record: Record, hooks: ViewHooks, outcomes: Sequence[Outcome], labels: Sequence[str]
) -> dict[str, Any]:
    """Everything an episode page shows, as plain values for its template."""
    findings = [(f, "judge") for f in hooks.findings(record)] + [
        (f, "trace") for f in _trace_findings(record)
    ]
    names = {c.get("index"): short(c.get("name"), 80) for c in call_records(record)}
    by_call: dict[Any, list[str]] = {}
    by_write: dict[tuple[Any, str], list[str]] = {}
    shown_findings = []
    for number_, (finding, source) in enumerate(findings, 1):
        for index in finding.calls:
            rules = by_call.setdefault(index, [])
            if finding.rule not in rules:
                rules.append(finding.rule)
            if finding.entity is not None:
                by_write.setdefault((index, finding.entity), []).append(finding.rule)
        shown_findings.append(
            {
                "n": number_,
                "rule": short(finding.rule, 80),
                "text": short(finding.text, 1000),
                "source": source,
                "calls": [(i, names.get(i, "?")) for i in finding.calls[:50]],
            }
        )
    turns = transcript(record)
    shown_turns = []
    for turn in turns[:MAX_TURNS]:
        replies = []
        for reply in turn.replies[:MAX_REPLIES]:
            call = reply.call
            writes = [
                {**_write_view(w), "rules": by_write.get((reply.index, str(w.get("entity"))), [])}
                for w in reply.writes[:MAX_WRITES]
            ]
            replies.append(
                {
                    "index": reply.index,
                    "name": short(reply.name, 120),
                    "kind": short(call.get("kind"), 40) if call.get("kind") else "",
                    "arguments": pretty(reply.arguments),
                    "rewritten": reply.rewritten,
                    "executed_name": short(call.get("name"), 120),
                    "executed_arguments": pretty(call.get("arguments")),
                    "ok": reply.ok,
                    "result": pretty(call.get("result")) if reply.ok else None,
                    "error_type": short(reply.error.get("type"), 80),
                    "error_message": capped(str(reply.error.get("message", ""))),
                    "intercept": {k: short(v, 300) for k, v in as_dict(call.get("intercept")).items()},
                    "hidden": [short(h, 120) for h in as_list(call.get("hidden"))[:50]],
                    "writes": writes,
                    "more_writes": max(0, len(reply.writes) - MAX_WRITES),
                    "rules": by_call.get(reply.index, []),
                }
            )
        shown_turns.append(
            {
                "step": short(turn.step, 20),
                "content": capped(turn.content),
                "raw": turn.raw,
                "format": short(turn.format, 40) if turn.format else "",
                "action": capped(turn.action) if turn.raw or not turn.replies else None,
                "replies": replies,
                "more_replies": max(0, len(turn.replies) - MAX_REPLIES),
                "parse_error": capped(turn.parse_error) if turn.parse_error is not None else None,
                "follow_up": capped(turn.follow_up) if turn.follow_up is not None else None,
            }
        )
    trace = as_dict(record.get("trace"))
    verdict = as_dict(record.get("verdict"))
    instruction = record.get("instruction")
    return {
        "run": run.name,
        "benchmark": run.benchmark,
        "task": task_of(record),
        "template": short(record.get("template_id"), 200) if record.get("template_id") is not None else "",
        "instruction": capped(instruction if isinstance(instruction, str) else ""),
        "reward": number(record.get("reward")),
        "system_outcome": system_outcome(record),
        "outcomes": [(o.heading, flag(verdict.get(o.field)), o.good) for o in outcomes],
        "labels": [(name, label_value(record, name)) for name in labels],
        "ending": [
            (k, short(trace.get(k), 120))
            for k in ("disposition", "terminal", "truncated")
            if trace.get(k) is not None
        ],
        "findings": shown_findings,
        "variant": [(short(k, 80), short(v, 300)) for k, v in sorted(as_dict(record.get("variant")).items())],
        "point": [(short(k, 80), short(v, 300)) for k, v in sorted(record_point(record).items())],
        "variant_notes": _variant_notes(record, hooks),
        "turns": shown_turns,
        "more_turns": max(0, len(turns) - MAX_TURNS),
        "components": _components(record),
        "verdict": [(short(k, 80), pretty(v, 4000)) for k, v in verdict.items()],
        "other": [(short(k, 80), pretty(v, 4000)) for k, v in record.items() if k not in SECTION_FIELDS],
    }


# -- one run ------------------------------------------------------------------------------------------------
def _summary_rows(run: ViewRun) -> list[dict[str, Any]]:
    plain = set(getattr(run.report, "plain_metrics", ()) or ())
    rows = []
    for name, interval in run.summary.items():
        if name == "system_outcomes" or not isinstance(interval, dict):
            continue
        fmt = _num if name in plain else _pct
        value = number(interval.get("value"))
        rows.append(
            {
                "metric": short(name, 80),
                "value": fmt(value),
                "ci": ""
                if value is None
                else f"[{fmt(interval.get('ci_low'))}, {fmt(interval.get('ci_high'))}]",
                "n": short(interval.get("n"), 20),
            }
        )
    return rows


def _system_counts(records: Iterable[Record]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for record in records:
        outcome = system_outcome(record)
        if outcome:
            counts[outcome] = counts.get(outcome, 0) + 1
    return sorted(counts.items())


@dataclass
class _RunSite:
    """A run as the site lays it out."""

    run: ViewRun
    folder: str
    hooks: ViewHooks
    outcomes: list[Outcome]
    labels: list[str]
    pages: list[str]  # per record: its page's file name


def _run_site(run: ViewRun, number_: int) -> _RunSite:
    hooks = hooks_of(run.report)
    outcomes = hooks.outcome_columns(run.records)
    labels = [
        name for name in hooks.label_fields(run.records) if any(label_value(r, name) for r in run.records)
    ]
    pages, seen = [], set()
    for record in run.records:
        page = episode_file(record)
        while page in seen:  # two records of one key cannot both be latest, but a folder is untrusted
            page = page.removesuffix(".html") + "-2.html"
        seen.add(page)
        pages.append(page)
    return _RunSite(run, f"{number_:02d}-{slug(run.name, 40)}", hooks, outcomes, labels, pages)


def _index_table(site: _RunSite) -> dict[str, Any]:
    """The index's table as the page's script reads it: the columns and one row per episode."""
    columns: list[dict[str, Any]] = [
        {"label": "task", "kind": "link", "filter": "search"},
        {"label": "template", "kind": "text", "filter": "select"},
        {"label": "variant", "kind": "text", "filter": "select"},
        {"label": "reward", "kind": "num", "sort": True},
        *({"label": o.heading, "kind": "flag", "good": o.good, "filter": "select"} for o in site.outcomes),
        *({"label": name, "kind": "text", "filter": "select"} for name in site.labels),
        {"label": "system outcome", "kind": "text", "filter": "select"},
    ]
    rows = []
    for record, page in zip(site.run.records, site.pages, strict=True):
        verdict = as_dict(record.get("verdict"))
        rows.append(
            [
                [task_of(record), f"e/{page}"],
                short(record.get("template_id"), 120) if record.get("template_id") is not None else "",
                variant_label(record),
                number(record.get("reward")),
                *(flag(verdict.get(o.field)) for o in site.outcomes),
                *(label_value(record, name) for name in site.labels),
                system_outcome(record),
            ]
        )
    return {"columns": columns, "rows": rows}


# -- comparisons ------------------------------------------------------------------------------------------------
def _outcome_text(record: Mapping[str, Any] | None, outcomes: Sequence[Outcome]) -> str:
    """A short text of an episode's outcome: the outcomes that hold (``-`` when the run lacks it)."""
    if record is None:
        return "(not in this run)"
    outcome = system_outcome(record)
    if outcome:
        return f"system: {outcome}"
    verdict = as_dict(record.get("verdict"))
    held = [o.heading for o in outcomes if verdict.get(o.field) is True]
    return ", ".join(held) or "none of the outcomes"


def _signature(record: Mapping[str, Any] | None, outcomes: Sequence[Outcome]) -> tuple[Any, ...]:
    if record is None:
        return ("missing",)
    verdict = as_dict(record.get("verdict"))
    return (system_outcome(record), *(flag(verdict.get(o.field)) for o in outcomes))


@dataclass
class _Comparison:
    benchmark: str
    folder: str
    sites: list[_RunSite]
    keys: list[tuple[str, str]]
    cells: dict[tuple[str, str], list[tuple[Record, str] | None]]  # per run: (record, page) or None
    pages: dict[tuple[str, str], str]


def _comparisons(sites: Sequence[_RunSite]) -> list[_Comparison]:
    groups: dict[str, list[_RunSite]] = {}
    for site in sites:
        groups.setdefault(site.run.benchmark, []).append(site)
    out = []
    for number_, (benchmark, members) in enumerate((b, m) for b, m in groups.items() if len(m) > 1):
        keys: list[tuple[str, str]] = []
        cells: dict[tuple[str, str], list[tuple[Record, str] | None]] = {}
        for i, site in enumerate(members):
            for record, page in zip(site.run.records, site.pages, strict=True):
                key = compare_key(record)
                if key not in cells:
                    keys.append(key)
                    cells[key] = [None] * len(members)
                if cells[key][i] is None:  # a run holds one episode per key; keep the first of any other
                    cells[key][i] = (record, page)
        pages = {key: f"{slug(key[0])}-{digest(*key)}.html" for key in keys}
        out.append(
            _Comparison(benchmark, f"{number_ + 1:02d}-{slug(benchmark, 40)}", members, keys, cells, pages)
        )
    return out


def _compare_table(comparison: _Comparison) -> dict[str, Any]:
    outcomes = comparison.sites[0].outcomes
    columns: list[dict[str, Any]] = [
        {"label": "task", "kind": "link", "filter": "search"},
        {"label": "variant", "kind": "text", "filter": "select"},
        {"label": "in runs", "kind": "text", "filter": "select"},
        {"label": "outcomes differ", "kind": "flag", "good": None, "filter": "select", "default": "1"},
    ]
    for site in comparison.sites:
        columns.append({"label": f"{site.run.name}: reward", "kind": "num", "sort": True})
        columns.append({"label": f"{site.run.name}: outcomes", "kind": "text", "wrap": True})
    rows = []
    for key in comparison.keys:
        cells = comparison.cells[key]
        present = [c for c in cells if c is not None]
        # outcomes differ only where two runs or more played the task (a missing one is no outcome)
        signatures = {_signature(c[0], outcomes) for c in present}
        row: list[Any] = [
            [short(key[0], 200), f"t/{comparison.pages[key]}"],
            _variant_of_key(key),
            f"{len(present)} of {len(cells)}",
            int(len(present) > 1 and len(signatures) > 1),
        ]
        for cell in cells:
            row.append(number(cell[0].get("reward")) if cell else None)
            row.append(_outcome_text(cell[0] if cell else None, outcomes))
        rows.append(row)
    return {"columns": columns, "rows": rows}


def _variant_of_key(key: tuple[str, str]) -> str:
    try:
        variant = json.loads(key[1])
    except ValueError:
        return short(key[1], 120)
    if not isinstance(variant, dict) or not variant:
        return "default"
    return ", ".join(f"{k}={short(v, 60)}" for k, v in sorted(variant.items()))


def _compare_context(comparison: _Comparison, key: tuple[str, str]) -> dict[str, Any]:
    columns = []
    for site, cell in zip(comparison.sites, comparison.cells[key], strict=True):
        if cell is None:
            columns.append({"run": site.run.name, "present": False})
            continue
        record, page = cell
        verdict = as_dict(record.get("verdict"))
        findings = [*site.hooks.findings(record), *_trace_findings(record)]
        calls = []
        for call in call_records(record)[: MAX_TURNS * 2]:
            error = as_dict(call.get("error"))
            calls.append(
                {
                    "index": call.get("index"),
                    "name": short(call.get("sent_name") if call.get("rewrites") else call.get("name"), 80),
                    "arguments": short(
                        call.get("sent_arguments") if call.get("rewrites") else call.get("arguments"), 200
                    ),
                    "ok": call.get("ok") is True,
                    "error": short(error.get("type"), 60) if error else "",
                    "writes": [
                        f"{short(w.get('action'), 20)} {short(w.get('entity'), 80)}"
                        for w in map(as_dict, as_list(call.get("writes")))
                    ][:20],
                }
            )
        columns.append(
            {
                "run": site.run.name,
                "present": True,
                "href": f"../../../runs/{site.folder}/e/{page}",
                "reward": number(record.get("reward")),
                "system_outcome": system_outcome(record),
                "outcomes": [(o.heading, flag(verdict.get(o.field)), o.good) for o in site.outcomes],
                "findings": [
                    {"rule": short(f.rule, 80), "text": short(f.text, 400), "calls": list(f.calls[:20])}
                    for f in findings
                ],
                "calls": calls,
            }
        )
    return {
        "benchmark": comparison.benchmark,
        "task": short(key[0], 200),
        "variant": _variant_of_key(key),
        "columns": columns,
    }


# -- the output folder -----------------------------------------------------------------------------------------
def prepare_out(out: Path) -> None:
    """Make ``out`` ready for a site: created when missing; a previous view's entries removed; anything
    else refused (a file, a symbolic link, a non-empty folder without the marker)."""
    if out.is_symlink():
        raise ViewFolderError(f"--out {out} is a symbolic link: give the site a real folder.")
    if out.exists() and not out.is_dir():
        raise ViewFolderError(f"--out {out} is a file, not a folder.")
    if not out.exists():
        out.mkdir(parents=True)
        return
    entries = list(out.iterdir())
    if not entries:
        return
    if not (out / MARKER).is_file():
        raise ViewFolderError(
            f"--out {out} is not empty and holds no previous view ({MARKER}): give a new or empty folder."
        )
    for name in SITE_ENTRIES:
        path = out / name
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # a model's text may hold lone surrogates (read back from \ud800 escapes): UTF-8 cannot store them
    path.write_text(text, encoding="utf-8", errors="replace")


@dataclass
class SiteSummary:
    """What a build wrote.

    Attributes:
        out: The site's folder (open ``out/index.html``).
        runs: Each run's index page.
        episodes: How many episode pages.
        comparisons: Each comparison's index page.
    """

    out: Path
    runs: list[Path]
    episodes: int
    comparisons: list[Path]

    @property
    def index(self) -> Path:
        return self.out / "index.html"


def _copy_static(out: Path) -> None:
    static = resources.files(__name__.rpartition(".")[0]).joinpath("static")
    for name in ("view.css", "table.js"):
        _write(out / "static" / name, static.joinpath(name).read_text(encoding="utf-8"))


def _unique_names(runs: Sequence[ViewRun]) -> list[ViewRun]:
    """The runs named as ``tooltrap report`` names them: by folder, with parent folders where two share a
    name (:func:`~..run.folder_names`)."""
    names = folder_names([run.directory for run in runs])
    return [replace(run, name=name) for run, name in zip(runs, names, strict=True)]


def build_site(runs: Sequence[ViewRun], out: str | Path) -> SiteSummary:
    """Write the static site of ``runs`` into ``out`` (see the module docs).

    Raises:
        ViewFolderError: ``out`` cannot take the site (nothing is written).
        EnvUsageError: Jinja2 is not installed (the ``view`` extra), or no run / too many runs.
    """
    if not runs:
        raise EnvUsageError("tooltrap view needs at least one run folder.")
    if len(runs) > MAX_RUNS:
        raise EnvUsageError(f"tooltrap view takes at most {MAX_RUNS} runs at once, not {len(runs)}.")
    env = _jinja()
    out = Path(out)
    prepare_out(out)
    _copy_static(out)
    sites = [_run_site(run, i + 1) for i, run in enumerate(_unique_names(runs))]
    comparisons = _comparisons(sites)
    episode_tpl = env.get_template("episode.html.j2")
    run_pages, n_episodes = [], 0
    for site in sites:
        folder = out / "runs" / site.folder
        run = site.run
        _write(
            folder / "index.html",
            env.get_template("run.html.j2").render(
                root="../../",
                run=run.name,
                folder=run.directory.name,
                benchmark=run.benchmark,
                env_id=short(run.info.get("env_id"), 120) if run.info.get("env_id") else "",
                settings=[
                    (k, short(run.info[k], 300))
                    for k in (
                        "agent",
                        "roles",
                        "mitigation",
                        "harness",
                        "seed",
                        "tasks",
                        "variants",
                        "protocol",
                    )
                    if run.info.get(k) not in (None, "", {}, [])
                ],
                n=len(run.records),
                summary=_summary_rows(run),
                system=_system_counts(run.records),
                notes=run.notes,
                table=_index_table(site),
                comparisons=[
                    (c.benchmark, f"../../compare/{c.folder}/index.html")
                    for c in comparisons
                    if any(s is site for s in c.sites)
                ],
            ),
        )
        run_pages.append(folder / "index.html")
        for record, page in zip(run.records, site.pages, strict=True):
            context = episode_context(run, record, site.hooks, site.outcomes, site.labels)
            _write(folder / "e" / page, episode_tpl.render(root="../../../", **context))
            n_episodes += 1
    compare_pages = []
    compare_tpl = env.get_template("compare_task.html.j2")
    for comparison in comparisons:
        folder = out / "compare" / comparison.folder
        differ = _compare_table(comparison)
        n_differ = sum(1 for row in differ["rows"] if row[3])
        _write(
            folder / "index.html",
            env.get_template("compare.html.j2").render(
                root="../../",
                benchmark=comparison.benchmark,
                runs=[(s.run.name, f"../../runs/{s.folder}/index.html") for s in comparison.sites],
                n=len(comparison.keys),
                n_differ=n_differ,
                table=differ,
            ),
        )
        compare_pages.append(folder / "index.html")
        for key in comparison.keys:
            _write(
                folder / "t" / comparison.pages[key],
                compare_tpl.render(root="../../../", **_compare_context(comparison, key)),
            )
    _write(
        out / "index.html",
        env.get_template("site.html.j2").render(
            root="",
            runs=[
                {
                    "name": s.run.name,
                    "folder": s.run.directory.name,
                    "benchmark": s.run.benchmark,
                    "env_id": short(s.run.info.get("env_id"), 120) if s.run.info.get("env_id") else "",
                    "n": len(s.run.records),
                    "href": f"runs/{s.folder}/index.html",
                }
                for s in sites
            ],
            comparisons=[
                {
                    "benchmark": c.benchmark,
                    "runs": [s.run.name for s in c.sites],
                    "n": len(c.keys),
                    "href": f"compare/{c.folder}/index.html",
                }
                for c in comparisons
            ],
        ),
    )
    _write(out / MARKER, json.dumps({"tooltrap_view": 1}) + "\n")
    return SiteSummary(out, run_pages, n_episodes, compare_pages)


__all__ = ["MARKER", "RECORD_FIELDS", "SiteSummary", "ViewFolderError", "ViewRun", "build_site", "read_run"]
