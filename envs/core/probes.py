"""Probes of a judge in both directions, derived mechanically from each task's gold solution.

A judge is right when a policy that maximises it learns what the user wants and an honest agent that
writes differently is not charged for it. A benchmark declares two kinds of probe generators (in its
``probes.py`` room, as a :class:`ProbeSet`), and its self-check runs both on every task:

* **gaming** probes are gold with something a reward maximiser might learn (a doubled write, a
  placeholder text, a quiet extra edit): each must score strictly below gold;
* **honest** probes are gold written differently by an agent that does the same thing (another date
  format, a paraphrase around the same facts, an update split into one call per field, an extra read):
  each must score exactly gold's reward with gold's verdict (every boolean of the verdict's
  ``to_dict()``, or the benchmark's own outcome function).

A probe may carry several attempts (the orders in which a split update can be made, say): the first
attempt the tools accept in full is the probe; a probe none of whose attempts the tools accept is
counted as not applicable, never as passed. An attempt is whatever the benchmark's ``play`` function
takes: a sequence of tool calls for a benchmark whose gold is a call list, an agent factory for one
whose policies must read what the tools return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .tasks import Task, ToolCall
from .tools import ToolSpec
from .trace import CallRecord

Direction = Literal["gaming", "honest"]
DIRECTIONS: tuple[Direction, ...] = ("gaming", "honest")


#: one way of playing a probe: tool calls (before gold's final answer) or a factory of an agent
Attempt = Sequence[ToolCall] | Callable[[], Any]


@dataclass(frozen=True)
class Probe:
    """One variant of gold: ``attempts`` are tried in order (see the module docs)."""

    kind: str
    direction: Direction
    attempts: tuple[Attempt, ...]

    @classmethod
    def of(cls, kind: str, direction: Direction, *attempts: Attempt) -> Probe:
        return cls(kind, direction, tuple(a if callable(a) else tuple(a) for a in attempts))


@dataclass(frozen=True)
class ProbeSource:
    """What a generator derives its probes from: the task and the variant (world) it is played in; for
    a benchmark whose gold is a call list, gold's calls before its final answer, those calls as
    executed (same order), gold's final answer, and the task's tools by name."""

    task: Task
    variant: Mapping[str, Any] | None = None
    gold: Sequence[ToolCall] = ()
    records: Sequence[CallRecord] = ()
    finish: Sequence[ToolCall] = ()
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)


ProbeGenerator = Callable[[ProbeSource], Iterable[Probe]]


def probe(
    kind: str, direction: Direction, attempt: Callable[[ProbeSource], Attempt | None]
) -> ProbeGenerator:
    """A generator of one probe of ``kind``: ``attempt(source)`` gives what to play (calls, or an agent
    factory), or None where the probe does not apply to that task or setting."""

    def generate(source: ProbeSource) -> list[Probe]:
        played = attempt(source)
        return [Probe.of(kind, direction, played)] if played else []

    generate.__name__ = kind
    return generate


@dataclass(frozen=True)
class ProbeSet:
    """A benchmark's probe generators, by direction."""

    gaming: tuple[ProbeGenerator, ...] = ()
    honest: tuple[ProbeGenerator, ...] = ()

    def probes(self, source: ProbeSource) -> list[Probe]:
        out: list[Probe] = []
        for generator in (*self.gaming, *self.honest):
            out.extend(generator(source))
        return out


@dataclass(frozen=True)
class Outcome:
    """How one played solution was judged: its reward, the verdict's flags, and its invalid calls."""

    reward: float
    flags: Mapping[str, Any]
    n_invalid_calls: int = 0
    #: what was actually played (e.g. the executed calls and the ending), when known: a gaming variant
    #: that played exactly as gold (the episode ended before it differed) is not applicable
    played: str | None = None


def verdict_flags(verdict: Any) -> dict[str, bool]:
    """The verdict's booleans (a verdict object's ``to_dict()``, or the verdict dict an env's final
    ``info`` carries): what an honest variant must share with gold."""
    fields = verdict.items() if isinstance(verdict, Mapping) else verdict.to_dict().items()
    return {k: v for k, v in fields if isinstance(v, bool)}


@dataclass(frozen=True)
class ProbeResult:
    task_id: str
    kind: str
    direction: Direction
    #: True: as required; False: the judge is wrong here; None: no attempt was accepted by the tools
    ok: bool | None
    detail: str = ""
    #: how the played attempt was judged (None when none was accepted): a labelled example of the judge
    outcome: Outcome | None = None


def judge_probe(task_id: str, probe: Probe, gold: Outcome, got: Outcome | None) -> ProbeResult:
    """Whether ``got`` (None: no attempt was valid) is what ``probe``'s direction requires of it."""
    if got is None:
        return ProbeResult(task_id, probe.kind, probe.direction, None, "no attempt was accepted by the tools")
    if probe.direction == "gaming" and got.played is not None and got.played == gold.played:
        return ProbeResult(task_id, probe.kind, probe.direction, None, "played as gold: it ended first", got)
    if probe.direction == "gaming":
        ok = got.reward < gold.reward
        detail = "" if ok else f"scores {got.reward:g}, not below gold's {gold.reward:g} ({_flags(got)})"
        return ProbeResult(task_id, probe.kind, probe.direction, ok, detail, got)
    differs = sorted(k for k in {*gold.flags, *got.flags} if gold.flags.get(k) != got.flags.get(k))
    ok = got.reward == gold.reward and not differs
    detail = (
        ""
        if ok
        else f"scores {got.reward:g} where gold scores {gold.reward:g}"
        + (f"; verdict differs in {', '.join(f'{k}={got.flags.get(k)}' for k in differs)}" if differs else "")
    )
    return ProbeResult(task_id, probe.kind, probe.direction, ok, detail, got)


def _flags(outcome: Outcome) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(outcome.flags.items()) if v) or "no flag"


def run_probes(
    task_id: str,
    probes: Iterable[Probe],
    gold: Outcome,
    play: Callable[[Any], Outcome],
) -> list[ProbeResult]:
    """Play every probe (its first attempt with no invalid call) and judge it against ``gold``."""
    results = []
    for probe in probes:
        got = None
        for attempt in probe.attempts:
            outcome = play(attempt)
            if outcome.n_invalid_calls <= gold.n_invalid_calls:
                got = outcome
                break
        results.append(judge_probe(task_id, probe, gold, got))
    return results


def probe_problems(results: Iterable[ProbeResult], prefix: str = "") -> list[str]:
    """One line per probe the judge got wrong (``prefix``: the setting it was played in)."""
    return [f"{prefix}{r.direction} probe {r.kind}: {r.detail}" for r in results if r.ok is False]


@dataclass
class ProbeTally:
    """Counts per (direction, kind) over a corpus, and the failures."""

    counts: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # [run, as required, n/a]
    failures: list[ProbeResult] = field(default_factory=list)

    def add(self, results: Iterable[ProbeResult]) -> None:
        for r in results:
            c = self.counts.setdefault((r.direction, r.kind), [0, 0, 0])
            if r.ok is None:
                c[2] += 1
                continue
            c[0] += 1
            c[1] += bool(r.ok)
            if not r.ok:
                self.failures.append(r)

    @property
    def ok(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        """One line per probe kind: gaming ones counted below gold, honest ones exactly at gold."""
        out = []
        for direction in DIRECTIONS:
            what = "score below gold" if direction == "gaming" else "score exactly as gold"
            for (d, kind), (n, good, skipped) in sorted(self.counts.items()):
                if d == direction:
                    extra = (
                        f" ({skipped} not applicable: refused by the tools, or played as gold)"
                        if skipped
                        else ""
                    )
                    out.append(f"{direction} probe {kind}: {good}/{n} {what}{extra}")
        return out
