"""What the viewer shows differently per benchmark (``tooltrap view``): its outcome columns, its
labels, how a violation points at the call that broke it, what the episode's variant hid or changed.

A benchmark's report object carries its hooks (``BenchmarkReport.view``, set by the benchmark's
evaluation package); without them the viewer uses :class:`ViewHooks` itself, which reads what every
record holds: the verdict's boolean fields as outcomes, the record's short text fields as labels, no
findings beyond the trace's own (invalid calls, interceptions, rewrites, hidden fields).

Everything a hook returns is the judge's or the trace's view of the episode (privileged: the world,
the mask, the injection, the rule a write broke); the viewer labels it so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..transcript import as_dict, as_list

#: record fields an episode page shows in sections of their own
SECTION_FIELDS = frozenset(
    {
        "task_id",
        "template_id",
        "benchmark",
        "instruction",
        "reward",
        "rewards",
        "reward_components",
        "system_outcome",
        "point",
        "variant",
        "trace",
        "verdict",
    }
)

#: record fields that are the record's machinery, never labels (those without a section of their own
#: go under an episode page's "other fields")
RECORD_FIELDS = SECTION_FIELDS | frozenset(
    {"seed", "log", "roles", "turns", "void", "simulator_errors", "played_task_id", "failed_role"}
)


@dataclass(frozen=True)
class Outcome:
    """An outcome column of the index: a field of the verdict.

    Attributes:
        field: The verdict's field (a boolean; None reads as "not applicable").
        good: Whether true is the good value (``goal``: True, ``cd``: False; None: neither).
        label: The column's heading (default: the field).
    """

    field: str
    good: bool | None = None
    label: str = ""

    @property
    def heading(self) -> str:
        return self.label or self.field


@dataclass(frozen=True)
class Finding:
    """One thing the judge holds against (or for) an episode, for the episode page's verdict.

    Attributes:
        rule: The rule or outcome's name, as the verdict names it (``scope_expansion``, ``unsafe_commit``).
        text: One sentence saying what happened.
        calls: The indexes of the calls that broke it (the trace's ``index``); empty when no one call
            did (an omission, the episode as a whole).
        entity: The written entity (``collection/id``) when the finding is about one write of the call.
    """

    rule: str
    text: str
    calls: tuple[int, ...] = ()
    entity: str | None = None


def call_records(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every call of a record's trace, in order (untrusted: anything not an object is skipped)."""
    trace = as_dict(record.get("trace"))
    return [as_dict(c) for s in as_list(trace.get("steps")) for c in as_list(as_dict(s).get("calls"))]


def call_index(call: Mapping[str, Any]) -> int | None:
    """A call's index in its episode, or None when the record holds none."""
    index = call.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def terminal_calls(record: Mapping[str, Any]) -> tuple[int, ...]:
    """The index of the call that ended the episode (the trace's terminal tool), if any."""
    trace = as_dict(record.get("trace"))
    name = trace.get("terminal")
    found = [call_index(c) for c in call_records(record) if c.get("name") == name and c.get("ok") is True]
    found = [i for i in found if i is not None]
    return (found[-1],) if found else ()


def flagged(verdict: Mapping[str, Any], *flags: tuple[str, str, Sequence[int]]) -> list[Finding]:
    """A finding for each ``(flag, text, calls)`` whose verdict flag is true (a judge's boolean outcome
    that names its own rule), in the order given."""
    return [Finding(flag, text, tuple(calls)) for flag, text, calls in flags if verdict.get(flag) is True]


def unexplained(
    verdict: Mapping[str, Any], findings: list[Finding], outcome: str, text: str
) -> list[Finding]:
    """``findings``, and when the verdict's headline ``outcome`` is false and none of them explains it, a
    finding that says so (``text``): a failed episode never shows an empty verdict."""
    if verdict.get(outcome) is False and not findings:
        return [*findings, Finding(outcome, text)]
    return findings


def shown_value(value: Any) -> str:
    """A short text for a variant value or label (lists and objects as compact JSON)."""
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class ViewHooks:
    """The viewer's per-benchmark hooks; this base is the generic view every benchmark gets.

    Subclasses set :attr:`outcomes` and :attr:`labels` and override :meth:`findings` and
    :meth:`variant_notes`; every method takes one episode record (untrusted: a missing or odd field
    gives less to show, never an error).
    """

    #: the index's outcome columns, in order; empty: every boolean field of the verdict
    outcomes: Sequence[Outcome] = ()
    #: record fields shown (and filterable) as labels; empty: the record's short text and boolean fields
    labels: Sequence[str] = ()

    def outcome_columns(self, records: Sequence[Mapping[str, Any]]) -> list[Outcome]:
        """The outcome columns of a run's index (:attr:`outcomes`, or the verdicts' boolean fields that
        are not also record labels, in the order the first verdict holds them, at most 16)."""
        if self.outcomes:
            return list(self.outcomes)
        seen: dict[str, None] = {}
        for record in records[:50]:
            verdict = as_dict(record.get("verdict"))
            for key, value in verdict.items():
                if isinstance(value, bool) and key not in record:
                    seen.setdefault(key, None)
        return [Outcome(k, True if k == "goal" else None) for k in list(seen)[:16]]

    def label_fields(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        """The label columns of a run's index (:attr:`labels`, or the records' top-level text and
        boolean fields that are not the record's machinery and take at most 50 values in the run)."""
        if self.labels:
            return list(self.labels)
        values: dict[str, set[str]] = {}
        for record in records:
            for key, value in record.items():
                if key in RECORD_FIELDS or not isinstance(value, str | bool) or len(str(value)) > 80:
                    continue
                values.setdefault(key, set()).add(str(value))
        return [k for k, v in values.items() if len(v) <= 50]

    def findings(self, record: Mapping[str, Any]) -> list[Finding]:
        """What the judge holds against the episode, each pointing at the calls that broke it (the
        generic view: nothing; the trace's invalid calls are added by the viewer for every benchmark)."""
        return []

    def variant_notes(self, record: Mapping[str, Any]) -> list[str]:
        """What the episode's variant hid or changed, in sentences (beyond the hidden fields, rewrites
        and interceptions the trace records, which the viewer lists for every benchmark)."""
        return []


#: the hooks of a benchmark that brings none
GENERIC = ViewHooks()


def hooks_of(report: Any) -> ViewHooks:
    """The viewer's hooks of a benchmark's report object (``report.view``), or the generic ones."""
    hooks = getattr(report, "view", None)
    return hooks if isinstance(hooks, ViewHooks) else GENERIC
