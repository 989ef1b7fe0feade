"""Small statistics used by the benchmarks' reports, as pure functions over arrays (numpy only).

* :func:`cohens_kappa` - agreement of two binary raters beyond chance; arrays of shape (N,).
* :func:`spearman` - rank correlation (average ranks for ties) of two arrays of shape (N,).
* :func:`cohens_h` - effect size between two proportions.
* :func:`two_proportion_z` - the pooled two-proportion z statistic and its two-sided p-value.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike


def cohens_kappa(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's kappa of two binary ratings (shape (N,) each); NaN when chance agreement is 1."""
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    observed = float(np.mean(x == y))
    px, py = float(x.mean()), float(y.mean())
    expected = px * py + (1 - px) * (1 - py)
    return float("nan") if expected == 1 else (observed - expected) / (1 - expected)


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=np.float64)
    sorted_values = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: ArrayLike, b: ArrayLike) -> float:
    """Spearman's rank correlation of two arrays of shape (N,): Pearson's r of their average ranks."""
    x = _ranks(np.asarray(a, dtype=np.float64))
    y = _ranks(np.asarray(b, dtype=np.float64))
    x, y = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float((x * x).sum() * (y * y).sum()))
    return float("nan") if denominator == 0 else float((x * y).sum() / denominator)


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h between two proportions: ``2 asin(sqrt(p1)) - 2 asin(sqrt(p2))``."""
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


def two_proportion_z(successes1: int, n1: int, successes2: int, n2: int) -> tuple[float, float]:
    """The pooled two-proportion z statistic and its two-sided normal p-value."""
    p1, p2 = successes1 / n1, successes2 / n2
    pooled = (successes1 + successes2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return float("nan"), float("nan")
    z = (p1 - p2) / se
    return z, math.erfc(abs(z) / math.sqrt(2))
