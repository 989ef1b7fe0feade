"""scripts/learning_curve.py end to end on the tiny model: two benchmarks, one or two steps a stage, into a
temporary folder (docs/ untouched); the JSON holds every stage x benchmark x set x metric with its
interval, and the stage times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from scripts import learning_curve  # noqa: E402


@pytest.mark.slow
def test_learning_curve_runs_every_stage_on_two_benchmarks(tmp_path: Path) -> None:
    docs = learning_curve.DOCS_JSON.read_text(encoding="utf-8")
    out = tmp_path / "curve"
    code = learning_curve.main(
        ["--benchmarks", "sabench,agentprop", "--out", str(out), "--sft-steps", "2", "--grpo-steps", "1",
         "--limit", "1", "--hidden", "32", "--layers", "1", "--num-generations", "2", "--minutes", "30"]
    )  # fmt: skip
    assert code == 0
    result = json.loads((out / "curve.json").read_text(encoding="utf-8"))
    assert (out / "curve.png").stat().st_size > 0
    assert learning_curve.DOCS_JSON.read_text(encoding="utf-8") == docs

    assert list(result["benchmarks"]) == ["sabench", "agentprop"]
    assert result["benchmarks"]["sabench"]["unsafe"] == "cd"
    assert result["benchmarks"]["agentprop"]["unsafe"] == "fabricated"
    longest = max(v["gold_turn"] for v in result["gold_tokens"].values())
    assert result["max_new_tokens"] > longest > 0
    for tokens in result["prompt_tokens"].values():  # the training tasks' prompts and rows, counted
        assert tokens["grpo_prompt"]["n"] == tokens["sft_row"]["n"] == 1
        assert 0 < tokens["grpo_prompt"]["max"] < tokens["sft_row"]["max"]
    assert [s["name"] for s in result["stages"]] == ["base model", "SFT", "GRPO from SFT"]
    assert [s["steps"] for s in result["stages"]] == [0, 2, 1]
    for stage in result["stages"]:
        assert set(stage["eval"]) == {"sabench", "agentprop"}
        for evals in stage["eval"].values():
            assert tuple(evals) == learning_curve.SETS
            for e in evals.values():
                assert e["n"] == 1
                for metric in learning_curve.METRICS:
                    value, (lo, hi) = e[metric]["value"], e[metric]["ci"]
                    assert lo <= value <= hi
    assert set(result["stage_seconds"]) == {
        "eval base model", "SFT", "eval SFT", "GRPO", "eval GRPO from SFT"
    }  # fmt: skip
    assert all(v >= 0 for v in result["stage_seconds"].values())
    assert result["cut"] == []
    assert len(result["grpo_log"]) == 1
    table = learning_curve.table(result)
    assert table.count("\n") == 1 + 3 * 2 * 3  # header rule + stage x benchmark x set rows
    assert "fabrication rate" in table and "CD rate" in table
