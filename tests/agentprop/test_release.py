"""The AgentProp-Bench release's printed numbers, recomputed from its result files (read from the copy
in ../shared/data, never copied): the hop rates with the release's bootstrap, the rejection/recovery
Spearman, judge agreement, the interceptor, the tool-call rate, and the substring heuristic."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tooltrap.wrappers.eval.agentprop.release import (
    NOT_RECOMPUTABLE,
    ensemble_agreement,
    heuristic_correct,
    hop_rates,
    interceptor_hallucination,
    judge_agreement,
    read_rows,
    rejection_recovery_spearman,
    release_interval,
    tool_call_rate,
)
from tooltrap.wrappers.eval.stats import cohens_h, cohens_kappa, spearman, two_proportion_z

RESULTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "agentprop-release" / "data" / "results"
needs_release = pytest.mark.skipif(not RESULTS.exists(), reason="the release copy is not on this machine")


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(
            a, b, rel_tol=0, abs_tol=1e-9
        )  # the release's numpy rounds its last bit otherwise
    return a == b


@needs_release
def test_hop_rates_equal_the_released_file():
    ours = hop_rates(read_rows(RESULTS / "p2_all_rejudged.csv"))
    released = json.loads((RESULTS / "hop_rates.json").read_text())
    assert ours.keys() == released.keys()
    for model in released:
        assert _close(ours[model], released[model]), model
    assert round(rejection_recovery_spearman(ours), 3) == 0.126


@needs_release
def test_judges_interceptor_and_tool_call_rate():
    ensemble = ensemble_agreement(read_rows(RESULTS / "ensemble_judge.csv"))
    metrics = json.loads((RESULTS / "ensemble_judge_metrics.json").read_text())
    for key in (
        "n",
        "heuristic_kappa",
        "unanimous_rate",
        "gpt4o_kappa",
        "gemini_25_flash_kappa",
        "gpt4o_mini_kappa",
    ):
        assert _close(ensemble[key], metrics[key]), key
    agreement = judge_agreement(read_rows(RESULTS / "judge_agreement.csv"))
    assert round(agreement["cohens_kappa"], 4) == 0.1647
    rates = interceptor_hallucination(
        read_rows(RESULTS / "interceptor_control_600.csv")
        + read_rows(RESULTS / "interceptor_heldout_600.csv")
    )
    assert round(100 * rates[("gpt4o_mini", "no_interceptor")], 1) == 55.8
    assert round(100 * rates[("gpt4o_mini", "early_interceptor")], 1) == 32.8
    assert round(100 * rates[("gemini_20_flash", "no_interceptor")], 1) == 44.5
    assert round(100 * rates[("gemini_20_flash", "early_interceptor")], 1) == 43.2
    calls = tool_call_rate(read_rows(RESULTS / "p2_all_rejudged.csv"))
    assert (calls["gpt4o_mini"], calls["gemini_20_flash"], calls["gpt4o"], calls["gpt41_nano"]) == (
        0.40,
        0.05,
        1.00,
        0.99,
    )
    assert set(NOT_RECOMPUTABLE) == {
        "human_vs_heuristic_kappa",
        "human_vs_ensemble_kappa",
        "human_vs_gpt4o_kappa",
        "calibrated_correct_rate",
    }


@needs_release
def test_the_substring_heuristic_is_the_releases_column():
    rows = read_rows(RESULTS / "p2_all_rejudged.csv")
    assert all(
        heuristic_correct(r["final_answer"], r["ground_truth"]) == (r["heuristic_correct"] == "True")
        for r in rows
    )


def test_statistics_on_hand_computed_fixtures():
    assert cohens_kappa([1, 1, 0, 0], [1, 1, 0, 0]) == 1.0
    assert cohens_kappa([1, 0, 1, 0], [1, 1, 0, 0]) == 0.0  # agreement 0.5, chance 0.5
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 2, 3], [3, 2, 2, 1]) == pytest.approx(-1.0)  # average ranks for ties
    assert cohens_h(0.5, 0.5) == 0.0 and cohens_h(1.0, 0.0) == pytest.approx(math.pi)
    z, p = two_proportion_z(60, 100, 40, 100)
    assert z == pytest.approx(2.8284, abs=1e-4) and p == pytest.approx(0.00468, abs=1e-4)
    interval = release_interval([1, 0, 1, 1])
    assert interval["point"] == 0.75 and 0 <= interval["lo"] <= 0.75 <= interval["hi"] <= 1
    assert release_interval([1, 0, 1, 1]) == interval and release_interval([]) is None


@needs_release
def test_fabrication_proxy_over_the_released_final_answers():
    """A regression fixture: the rule reproduces the paper's 37.5% for Gemini-2.0-Flash; for
    GPT-4o-mini it flags 15.5% against the paper's 12% (its answers often restate the request's own
    facts - "scheduled for next Monday at 14:00" - which a text rule cannot tell from a claimed
    outcome without the unreleased traces)."""
    from tooltrap.wrappers.eval.agentprop.release import claims_tool_outcome, fabrication_without_tools

    rates = fabrication_without_tools(read_rows(RESULTS / "p2_all_rejudged.csv"))
    assert rates["gemini_20_flash"] == 0.375 and rates["gpt4o_mini"] == 0.155
    assert claims_tool_outcome("Event EVT_5499 deleted.") and not claims_tool_outcome("I cannot do that.")


@needs_release
def test_tables_1_and_5_cell_by_cell(tmp_path):
    """Every printed cell of Table 1 and the retail Table 5 comes out of the released CSVs; a table
    with one altered cell is caught."""
    import shutil
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from reproduce_agentprop import main, table_cells

    release = RESULTS.parent.parent
    cells = table_cells(release, RESULTS)
    assert len(cells) == 45 + 12 and all(ours == printed for _, ours, printed in cells)
    copy = tmp_path / "release"
    shutil.copytree(release / "paper", copy / "paper")
    table = copy / "paper" / "tables" / "table5_retail.tex"
    table.write_text(table.read_text().replace("37.0 [27.0, 47.0]", "37.0 [27.0, 47.1]"))
    altered = [c for c in table_cells(copy, RESULTS) if c[1] != c[2]]
    assert [what for what, _, _ in altered] == ["table5_retail deepseek_v3 baseline"]
    assert main(["--release", str(release)]) == 0
