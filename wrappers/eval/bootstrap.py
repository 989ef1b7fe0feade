"""Template-clustered bootstrap (the SABench paper's inference unit), vectorized and seeded.

A rate is ``sum(numerator) / sum(denominator)`` over episodes. Resampling clusters (templates) with
replacement is equivalent to drawing a multinomial count per cluster, so one resample is a dot product
of counts with per-cluster sums: ``B`` resamples cost one ``(B, K) @ (K,)`` product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Interval:
    value: float
    ci_low: float
    ci_high: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def cluster_sums(
    values: ArrayLike, mask: ArrayLike, clusters: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """Per-cluster numerator and denominator sums.

    Args:
        values: shape (N,), the per-episode outcome (0/1 or real).
        mask: shape (N,), bool: which episodes are in the metric's denominator.
        clusters: shape (N,), integer cluster index in ``[0, K)``.

    Returns:
        (num, den, K): arrays of shape (K,) and the number of clusters.
    """
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    clusters = np.asarray(clusters, dtype=np.int64)
    k = int(clusters.max()) + 1 if clusters.size else 0
    num = np.bincount(clusters, weights=values * mask, minlength=k)
    den = np.bincount(clusters, weights=mask.astype(np.float64), minlength=k)
    return num, den, k


def resample_counts(
    n_clusters: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> NDArray[np.int64]:
    """Shape (B, K): how many times each cluster is drawn in each resample (K draws with replacement)."""
    rng = np.random.default_rng(seed)
    if n_clusters == 0:
        return np.zeros((n_resamples, 0), dtype=np.int64)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_resamples)


def ratio_interval(
    num: NDArray[np.float64], den: NDArray[np.float64], counts: NDArray[np.int64], level: float = 0.95
) -> Interval:
    """Point estimate and percentile interval of ``sum(num)/sum(den)`` under the resampling ``counts``.

    Args:
        num: shape (K,), per-cluster numerators.
        den: shape (K,), per-cluster denominators.
        counts: shape (B, K), cluster draw counts.
        level: interval coverage.
    """
    total = float(den.sum())
    if total == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    value = float(num.sum() / total)
    b_num = counts @ num
    b_den = counts @ den
    valid = b_den > 0
    rates = b_num[valid] / b_den[valid]
    alpha = (1 - level) / 2
    low, high = np.quantile(rates, [alpha, 1 - alpha]) if rates.size else (value, value)
    return Interval(value, float(low), float(high), int(total))


def clustered_rate(
    values: ArrayLike,
    mask: ArrayLike,
    clusters: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval:
    """Rate of ``values`` over ``mask`` with a template-clustered bootstrap interval (one call)."""
    num, den, k = cluster_sums(values, mask, clusters)
    return ratio_interval(num, den, resample_counts(k, n_resamples, seed), level)
