"""SABench is byte-identical to the golden digests taken before the engine was made generic: the corpus,
the prompts and tool schemas, every verdict, reward and reward component of the 11 scripted runs and of
every trap solution, the summaries and the report (scripts/baselines.py sabench)."""

from __future__ import annotations

import json

from scripts.benchmarks.sabench.baselines import GOLDEN, compute, differences


def test_sabench_is_byte_identical_to_the_golden_digests(tmp_path):
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    actual = compute(work=tmp_path)
    assert set(actual) == set(expected)
    assert not differences(expected, actual), differences(expected, actual)
    assert len(actual["runs"]) == 11 and all(len(r) == 201 for r in actual["runs"].values())
