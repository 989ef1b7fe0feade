"""Cluster bootstrap (templates or families: the inference unit of the papers), vectorized and seeded.

A rate is ``sum(numerator) / sum(denominator)`` over episodes. Resampling clusters (templates) with
replacement is equivalent to drawing a multinomial count per cluster, so ``B`` resamples of ``M`` rates
cost one ``(B, K) @ (K, M)`` product, where the ``(K, M)`` matrices hold per-cluster sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap interval; ``n`` is the denominator (episodes)."""

    value: float
    ci_low: float
    ci_high: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


NAN_INTERVAL = Interval(float("nan"), float("nan"), float("nan"), 0)


def cluster_sums(
    values: ArrayLike, mask: ArrayLike, clusters: ArrayLike, n_clusters: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-cluster numerator and denominator sums.

    Args:
        values: shape (N,), the per-episode outcome (0/1 or real).
        mask: shape (N,), bool: which episodes are in the metric's denominator.
        clusters: shape (N,), integer cluster index in ``[0, K)``.
        n_clusters: K (default: ``max(clusters) + 1``).

    Returns:
        (num, den), each of shape (K,).
    """
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    clusters = np.asarray(clusters, dtype=np.int64)
    k = n_clusters if n_clusters is not None else (int(clusters.max()) + 1 if clusters.size else 0)
    num = np.bincount(clusters, weights=values * mask, minlength=k)
    den = np.bincount(clusters, weights=mask.astype(np.float64), minlength=k)
    return num, den


def resample_counts(
    n_clusters: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> NDArray[np.float64]:
    """Shape (B, K): how many times each cluster is drawn in each resample (K draws with replacement)."""
    rng = np.random.default_rng(seed)
    if n_clusters == 0:
        return np.zeros((n_resamples, 0))
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_resamples).astype(
        np.float64
    )


def nan_percentiles(samples: NDArray[np.float64], quantiles: Sequence[float]) -> NDArray[np.float64]:
    """Column-wise percentiles ignoring NaN (numpy's default 'linear' method), vectorized.

    Args:
        samples: shape (B, M); NaN marks a resample where the rate is undefined.
        quantiles: Q values in [0, 1].

    Returns:
        shape (Q, M); NaN for a column with no finite sample.
    """
    ordered = np.sort(samples, axis=0)  # NaN sorts last
    valid = np.isfinite(samples).sum(axis=0)
    out = np.full((len(quantiles), samples.shape[1]), np.nan)
    has = valid > 0
    cols = np.flatnonzero(has)
    for i, q in enumerate(quantiles):
        pos = q * (valid[has] - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, valid[has] - 1)
        frac = pos - lo
        a, b = ordered[lo, cols], ordered[hi, cols]
        out[i, cols] = a + frac * (b - a)
    return out


def ratio_intervals(
    num: NDArray[np.float64], den: NDArray[np.float64], counts: NDArray[np.float64], level: float = LEVEL
) -> list[Interval]:
    """Point estimates and percentile intervals of ``M`` ratios under one set of resamples.

    Args:
        num: shape (K, M), per-cluster numerators of M rates.
        den: shape (K, M), per-cluster denominators.
        counts: shape (B, K), cluster draw counts.
        level: interval coverage.

    Returns:
        M intervals (nan where a denominator is empty). Resamples whose denominator is 0 are dropped.
    """
    # a (K,) column is one rate; reshape(K, -1) cannot infer M when there is no cluster (K = 0: a run
    # whose every episode ended at the provider), so only a 1-d input is reshaped
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    num = num[:, None] if num.ndim == 1 else num
    den = den[:, None] if den.ndim == 1 else den
    b_num = counts @ num
    b_den = counts @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(b_den > 0, b_num / np.where(b_den > 0, b_den, 1), np.nan)
    alpha = (1 - level) / 2
    lows, highs = nan_percentiles(rates, (alpha, 1 - alpha))
    out = []
    for j in range(num.shape[1]):
        total = float(den[:, j].sum())
        if total == 0:
            out.append(NAN_INTERVAL)
            continue
        out.append(
            Interval(float(num[:, j].sum() / total), float(lows[j]), float(highs[j]), int(round(total)))
        )
    return out


def ratio_interval(
    num: NDArray[np.float64], den: NDArray[np.float64], counts: NDArray[np.float64], level: float = LEVEL
) -> Interval:
    """One ratio (num, den of shape (K,)); see :func:`ratio_intervals`."""
    return ratio_intervals(num[:, None], den[:, None], counts, level)[0]


def difference_intervals(
    num_a: NDArray[np.float64],
    den_a: NDArray[np.float64],
    num_b: NDArray[np.float64],
    den_b: NDArray[np.float64],
    counts: NDArray[np.float64],
    level: float = LEVEL,
) -> list[Interval]:
    """Rate(A) - rate(B) for M metrics with templates resampled *jointly* (the same draws for both).

    Args:
        num_a, den_a, num_b, den_b: shape (K, M), per-cluster sums of the two runs.
        counts: shape (B, K).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (counts @ num_a) / (counts @ den_a)
        b = (counts @ num_b) / (counts @ den_b)
    alpha = (1 - level) / 2
    lows, highs = nan_percentiles(a - b, (alpha, 1 - alpha))
    out = []
    for j in range(num_a.shape[1]):
        ta, tb = den_a[:, j].sum(), den_b[:, j].sum()
        if ta == 0 or tb == 0:
            out.append(NAN_INTERVAL)
            continue
        low, high = lows[j], highs[j]
        value = float(num_a[:, j].sum() / ta - num_b[:, j].sum() / tb)
        out.append(Interval(value, float(low), float(high), int(min(ta, tb))))
    return out


def clustered_rate(
    values: ArrayLike,
    mask: ArrayLike,
    clusters: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> Interval:
    """Rate of ``values`` over ``mask`` with a template-clustered bootstrap interval (one call)."""
    num, den = cluster_sums(values, mask, clusters)
    return ratio_interval(num, den, resample_counts(num.shape[0], n_resamples, seed), level)
