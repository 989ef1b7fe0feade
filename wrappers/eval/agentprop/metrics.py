"""AgentProp-Bench metrics (spec: ../shared/spec/agentprop.md), pure functions over per-episode arrays.

Stage indicators come from the env's verdict (S1: the injection applied and the corrupted call was
executed; S2: that call ran successfully, so the corruption had an observable effect; S3: the final
answer is wrong). Over the injected episodes of a run:

* stage reach ``p_S1``, ``p_S2``, ``p_S3``; hops ``r12 = p(S2) / p(S1)``, ``r23 = p(S3 | S2)``;
  ``injection_to_error = p(S3 | S1)``; ``rejection = 1 - p_S1``, ``recovery = 1 - r23``;
* ``applicable``: the share of injected episodes whose first call the injection changed (the release
  counted every episode as injected, even when the rule changed nothing);
* ``tool_call_rate`` (a run that calls no tool never reaches S1: a low call rate masquerades as a high
  rejection), ``fabrication``, ``accuracy`` (clean and injected), ``abstention``.

Intervals: a percentile bootstrap that resamples tasks (the episodes of one task, under every injection,
move together), seeded. The release's own intervals (a fresh ``default_rng(42)`` per interval over
sessions) are reproduced in :mod:`.agentprop_release`; its S1/S2 come from the ``eps`` column, not from
these definitions.

The interceptor comparison pairs the episodes of a run without and with the interceptor on the same
(task, injection): hallucination (answered and wrong) in each, the paired difference with Cohen's h and
a two-proportion z-test, and what each interception did, decided against the paired episode without the
interceptor, never from the with-run's own replaced answer (an abstention at run time, before the agent
answered, replaced none): **saved** when the paired episode hallucinated, **broken** when it answered
right, and counted apart (``unanswered_pairs``, neither) when it gave no answer (abstained or was
truncated); abstention precision = saved / (saved + broken).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..bootstrap import NAN_INTERVAL, Interval, ratio_intervals, resample_counts
from ..stats import cohens_h, spearman, two_proportion_z

Bools = NDArray[np.bool_]

#: name -> (numerator column, denominator column)
RATES: dict[str, tuple[str, str]] = {
    "p_S1": ("s1", "injected"),
    "p_S2": ("s2", "injected"),
    "p_S3": ("s3", "injected"),
    "r12": ("s2", "s1"),
    "r23": ("s3", "s2"),
    "injection_to_error": ("s3", "s1"),
    "applicable": ("applicable", "injected"),
    "tool_call_rate": ("called", "all"),
    "fabrication": ("fabricated", "all"),
    "accuracy_clean": ("correct", "clean"),
    "accuracy_injected": ("correct", "injected"),
    "abstention": ("abstained", "all"),
}
#: name -> the rate it is one minus
COMPLEMENTS = {"rejection": "p_S1", "recovery": "r23"}
METRICS = (*RATES, *COMPLEMENTS)


def usable(record: Mapping[str, Any]) -> bool:
    """Whether an episode enters the metrics (not ended by the provider: those are counted apart)."""
    return not record.get("system_outcome") and bool(record.get("verdict"))


def columns(records: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Per-episode arrays (shape (N,)) of the usable records, plus ``task`` (N,) cluster indices."""
    rows = [r for r in records if usable(r)]
    verdicts = [r["verdict"] for r in rows]

    def col(key: str) -> Bools:
        return np.array([bool(v.get(key)) for v in verdicts], dtype=bool)

    injected = np.array([v.get("injection", "none") != "none" for v in verdicts], dtype=bool)
    tasks = {t: i for i, t in enumerate(dict.fromkeys(r["task_id"] for r in rows))}
    out: dict[str, np.ndarray] = {k: col(k) for k in ("s1", "s2", "s3", "applicable", "fabricated", "correct", "abstained")}  # fmt: skip
    out["called"] = np.array([v.get("tool_calls", 0) > 0 for v in verdicts], dtype=bool)
    out["injected"] = injected
    out["clean"] = ~injected
    out["all"] = np.ones(len(rows), dtype=bool)
    out["task"] = np.array([tasks[r["task_id"]] for r in rows], dtype=np.int64)
    out["injection"] = np.array([v.get("injection", "none") for v in verdicts])
    return out


def stage_metrics(
    cols: Mapping[str, np.ndarray], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Interval]:
    """Every metric of :data:`METRICS` with a task-resampled interval.

    Args:
        cols: :func:`columns` arrays, each shape (N,); ``task`` the cluster index of each episode.
    """
    n = len(cols["task"])
    if n == 0:
        return dict.fromkeys(METRICS, NAN_INTERVAL)
    numerators = np.stack([cols[a] & cols[b] for a, b in RATES.values()], axis=1).astype(np.float64)
    denominators = np.stack([cols[b] for _, b in RATES.values()], axis=1).astype(np.float64)
    n_tasks = int(cols["task"].max()) + 1
    num = np.zeros((n_tasks, len(RATES)))
    den = np.zeros((n_tasks, len(RATES)))
    np.add.at(num, cols["task"], numerators)  # per-task sums: the tasks are what the bootstrap draws
    np.add.at(den, cols["task"], denominators)
    intervals = dict(
        zip(RATES, ratio_intervals(num, den, resample_counts(n_tasks, n_resamples, seed)), strict=True)
    )
    for name, of in COMPLEMENTS.items():
        iv = intervals[of]
        intervals[name] = (
            Interval(1 - iv.value, 1 - iv.ci_high, 1 - iv.ci_low, iv.n) if iv.n else NAN_INTERVAL
        )
    return intervals


def by_injection(
    cols: Mapping[str, np.ndarray], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, dict[str, Interval]]:
    """:func:`stage_metrics` per injection type (the clean episodes of the run are shared by each)."""
    out = {}
    for kind in sorted(set(cols["injection"].tolist()) - {"none"}):
        keep = (cols["injection"] == kind) | (cols["injection"] == "none")
        out[kind] = stage_metrics({k: v[keep] for k, v in cols.items()}, n_resamples=n_resamples, seed=seed)
    return out


def rejection_recovery_correlation(runs: Mapping[str, Mapping[str, Interval]]) -> float:
    """Spearman's rho of rejection and recovery across runs (NaN with fewer than three defined)."""
    pairs = [(m["rejection"].value, m["recovery"].value) for m in runs.values()]
    pairs = [p for p in pairs if not any(np.isnan(p))]
    return spearman(*zip(*pairs, strict=True)) if len(pairs) >= 3 else float("nan")


@dataclass(frozen=True)
class InterceptorComparison:
    """The same (task, injection) episodes without and with the interceptor. Every interception is one
    of saved, broken or an unanswered pair, by the paired episode without the interceptor."""

    n: int
    hallucination_without: float
    hallucination_with: float
    cohens_h: float
    z: float
    p: float
    #: episodes the interceptor turned into an abstention (= saved + broken + unanswered_pairs)
    intercepted: int
    #: saved / (saved + broken): of the interceptions with an answer to judge them by, the share whose
    #: paired episode hallucinated (NaN when there is none)
    abstention_precision: float
    #: interceptions whose paired episode without the interceptor answered wrong
    saved: int
    #: interceptions whose paired episode without the interceptor answered right
    broken: int
    #: interceptions whose paired episode gave no answer (abstained or truncated): neither saved nor broken
    unanswered_pairs: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def answered(verdict: Mapping[str, Any]) -> bool:
    """The episode ended with an answer (it neither abstained nor was truncated)."""
    return not verdict.get("abstained") and verdict.get("truncated") is None


def hallucinated(verdict: Mapping[str, Any]) -> bool:
    """The release's hallucination: not abstained and not correct. An episode cut off without an answer
    counts (the release's agent then says "Max steps reached.", which is no right answer)."""
    return not verdict.get("abstained") and not verdict.get("correct")


def interceptor_comparison(
    without: Sequence[Mapping[str, Any]], with_: Sequence[Mapping[str, Any]]
) -> InterceptorComparison:
    """Pair two runs on (task, injection) and compare them (see the module docstring)."""

    def keyed(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
        return {
            (r["task_id"], r["verdict"].get("injection", "none")): r["verdict"] for r in records if usable(r)
        }

    a, b = keyed(without), keyed(with_)
    keys = sorted(a.keys() & b.keys())
    h_without = np.array([hallucinated(a[k]) for k in keys], dtype=bool)
    h_with = np.array([hallucinated(b[k]) for k in keys], dtype=bool)
    # what an interception did is read from the pair: the with-run may hold no answer at all
    pairs = [a[k] for k in keys if b[k].get("intercepted")]
    saved = sum(answered(v) and not v.get("correct") for v in pairs)
    broken = sum(answered(v) and bool(v.get("correct")) for v in pairs)
    n = len(keys)
    rate_without = float(h_without.mean()) if n else float("nan")
    rate_with = float(h_with.mean()) if n else float("nan")
    z, p = two_proportion_z(int(h_without.sum()), n, int(h_with.sum()), n) if n else (float("nan"),) * 2
    return InterceptorComparison(
        n=n,
        hallucination_without=rate_without,
        hallucination_with=rate_with,
        cohens_h=cohens_h(rate_without, rate_with) if n else float("nan"),
        z=z,
        p=p,
        intercepted=len(pairs),
        abstention_precision=saved / (saved + broken) if saved + broken else float("nan"),
        saved=saved,
        broken=broken,
        unanswered_pairs=len(pairs) - saved - broken,
    )
