from __future__ import annotations

import numpy as np
import pytest

from tooltrap.wrappers.eval.bootstrap import clustered_rate, resample_counts
from tooltrap.wrappers.eval.sabench.metrics import episode_arrays, rate, summarize


def _fixture():
    # 3 templates: A (2 tasks), B (2 tasks, ambiguous), C (1 task)
    rows = [
        dict(task_id="a1", template_id="A", goal=True, cd=False, external_cd=False, ab_violation=False, clarification_proxy=False, unnecessary_clarification=False, ambiguous=False),
        dict(task_id="a2", template_id="A", goal=True, cd=True, external_cd=True, ab_violation=False, clarification_proxy=False, unnecessary_clarification=False, ambiguous=False),
        dict(task_id="b1", template_id="B", goal=False, cd=True, external_cd=False, ab_violation=True, clarification_proxy=False, unnecessary_clarification=False, ambiguous=True),
        dict(task_id="b2", template_id="B", goal=True, cd=False, external_cd=False, ab_violation=False, clarification_proxy=True, unnecessary_clarification=False, ambiguous=True),
        dict(task_id="c1", template_id="C", goal=False, cd=False, external_cd=False, ab_violation=False, clarification_proxy=False, unnecessary_clarification=True, ambiguous=False),
    ]  # fmt: skip
    return episode_arrays(rows)


def test_metrics_match_hand_computed_values():
    a = _fixture()
    assert rate(a, "goal") == pytest.approx(3 / 5)
    assert rate(a, "cd") == pytest.approx(2 / 5)
    assert rate(a, "goal_and_cd") == pytest.approx(1 / 5)
    assert rate(a, "fail_and_cd") == pytest.approx(1 / 5)
    assert rate(a, "external_cd") == pytest.approx(1 / 5)
    assert rate(a, "ab_violation") == pytest.approx(1 / 2)
    assert rate(a, "clarification_proxy") == pytest.approx(1 / 2)
    assert rate(a, "unnecessary_clarification") == pytest.approx(1 / 3)
    assert rate(a, "cd_given_goal") == pytest.approx(1 / 3)
    assert rate(a, "cd_given_goal_non_ambiguous") == pytest.approx(1 / 2)


def _slow_reference(values, mask, clusters, n_resamples, seed):
    """Explicit loop: draw K templates with replacement, pool their tasks, compute the rate."""
    counts = resample_counts(int(max(clusters)) + 1, n_resamples, seed)
    rates = []
    for row in counts:
        num = den = 0.0
        for cluster, times in enumerate(row):
            for v, m, c in zip(values, mask, clusters, strict=True):
                if c == cluster and m:
                    num += times * v
                    den += times
        if den:
            rates.append(num / den)
    return np.quantile(rates, [0.025, 0.975])


def test_bootstrap_matches_slow_reference():
    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(12), rng.integers(3, 6, size=12))
    values = rng.random(clusters.size) < 0.3
    mask = rng.random(clusters.size) < 0.8
    fast = clustered_rate(values, mask, clusters, n_resamples=2000, seed=9)
    low, high = _slow_reference(values, mask, clusters, 2000, 9)
    assert fast.ci_low == pytest.approx(low) and fast.ci_high == pytest.approx(high)
    assert fast.value == pytest.approx(values[mask].mean())
    assert fast.ci_low <= fast.value <= fast.ci_high


def test_multinomial_counts_are_template_draws():
    counts = resample_counts(7, 500, 1)
    assert counts.shape == (500, 7) and (counts.sum(axis=1) == 7).all()
    assert (counts == counts.astype(int)).all()
    assert (resample_counts(7, 500, 1) == counts).all()


def test_summary_is_seeded_and_has_n():
    a = _fixture()
    s1, s2 = summarize(a, n_resamples=1000, seed=3), summarize(a, n_resamples=1000, seed=3)
    assert s1 == s2
    assert s1["ab_violation"].n == 2 and s1["goal"].n == 5
