"""The AgentProp-Bench release's printed numbers, recomputed from its result files (read from the copy
in ../shared/data, never copied): the hop rates with the release's bootstrap, the rejection/recovery
Spearman, judge agreement, the interceptor, the tool-call rate, the substring heuristic, and the paper's
text numbers over them (P2 correctness, Table 3's judges, the heuristic's over-count, the calibrated
range, rejection and recovery); the numbers over the paper's 13 models are listed, not reproduced."""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.shared_data import AGENTPROP_RELEASE, needs
from tooltrap.wrappers.eval.agentprop.release import (
    NEEDS_THIRTEEN_MODELS,
    NOT_RECOMPUTABLE,
    OPEN_WEIGHT_INJECTION_TO_ERROR,
    ensemble_agreement,
    ensemble_correctness,
    heuristic_correct,
    heuristic_overcount,
    hop_rates,
    human_calibrated_error,
    injected_correctness,
    injection_to_error_range,
    interceptor_hallucination,
    judge_agreement,
    read_latex_table,
    read_rows,
    rejection_and_recovery,
    rejection_recovery_spearman,
    release_interval,
    tool_call_rate,
)
from tooltrap.wrappers.eval.stats import cohens_h, cohens_kappa, spearman, two_proportion_z

RESULTS = AGENTPROP_RELEASE / "data" / "results"
needs_release = needs(RESULTS)


def _script() -> ModuleType:
    """``scripts/reproduce_agentprop.py``, imported as the command line runs it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import reproduce_agentprop

    return reproduce_agentprop


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

    main, table_cells = _script().main, _script().table_cells

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


@needs_release
def test_p2_correctness_is_the_ensemble_before_and_after_the_injection():
    """The paper's 24.4% -> 16.2% (GPT-4o-mini) and 36.0% -> 24.3% (o3-mini): the ensemble over every
    baseline session, then over the injected (S1) sessions only; over every P2 session it would be 29.0%
    and 30.0%, which the paper does not print."""
    p2 = read_rows(RESULTS / "p2_all_rejudged.csv")
    baseline = ensemble_correctness(read_rows(RESULTS / "baseline_all_rejudged.csv"))
    injected = injected_correctness(hop_rates(p2))
    every_p2_session = ensemble_correctness(p2)
    models = ("gpt4o_mini", "o3_mini")
    assert [round(100 * baseline[m], 1) for m in models] == [24.4, 36.0]
    assert [round(100 * injected[m], 1) for m in models] == [16.2, 24.3]
    assert [round(100 * every_p2_session[m], 1) for m in models] == [29.0, 30.0]


@needs_release
def test_table3_kappas_are_its_printed_cells():
    """Each rater's kappa against the ensemble majority prints as Table 3's cell, and the script compares
    against those same cells."""
    printed = read_latex_table(RESULTS.parents[1] / "paper" / "tables" / "table3_judge.tex")
    ensemble = ensemble_agreement(read_rows(RESULTS / "ensemble_judge.csv"))
    raters = {
        "Heuristic (substring)": "heuristic",
        "GPT-4o-mini": "gpt4o_mini",
        "GPT-4o": "gpt4o",
        "Gemini-2.5-Flash": "gemini_25_flash",
    }
    cells = {
        key: float(re.sub(r"\\textbf\{(.*)\}", r"\1", printed[rater][0])) for rater, key in raters.items()
    }
    assert {key: round(ensemble[f"{key}_kappa"], 3) for key in cells} == cells
    p2 = read_rows(RESULTS / "p2_all_rejudged.csv")
    compared = {what: value for what, _, value, _ in _script().number_checks(RESULTS, p2, hop_rates(p2))}
    for key in ("gpt4o_mini", "gpt4o", "gemini_25_flash"):
        assert compared[f"Table 3 {key} kappa vs ensemble majority"] == cells[key], key


@needs_release
def test_overcount_ranges_rejection_and_recovery():
    """The heuristic's 34 pp over-count, the injection-to-error range 0.57-0.90 (0.53-0.70 calibrated),
    GPT-4.1-nano's 37.5% rejection and 2.9% recovery, Gemini-2.0-Flash's 95% rejection."""
    p2 = read_rows(RESULTS / "p2_all_rejudged.csv")
    hops = hop_rates(p2)
    assert round(100 * heuristic_overcount(p2)) == 34
    assert [round(x, 2) for x in injection_to_error_range(hops)] == [0.57, 0.90]
    assert [round(x, 2) for x in injection_to_error_range(hops, calibrated=True)] == [0.53, 0.70]
    # the paper's range is over 13 models: the 4 unreleased ones' printed rates must not widen it
    released = [h["injection_to_error"]["point"] for h in hops.values()]
    assert all(min(released) < rate < max(released) for rate in OPEN_WEIGHT_INJECTION_TO_ERROR.values())
    robustness = rejection_and_recovery(hops)
    assert round(robustness["gpt41_nano"]["rejection"], 3) == 0.375
    assert round(robustness["gpt41_nano"]["recovery"], 3) == 0.029
    assert round(robustness["gemini_20_flash"]["rejection"], 2) == 0.95


def test_human_calibration_on_hand_computed_values():
    """P(human wrong) = e * P(human wrong | ensemble wrong) + (1 - e) * P(human wrong | ensemble correct)."""
    assert human_calibrated_error(1.0) == pytest.approx(0.75)  # 1 - P(human correct | ensemble wrong)
    assert human_calibrated_error(0.0) == pytest.approx(0.24)  # 1 - P(human correct | ensemble correct)
    assert human_calibrated_error(0.5, (0.9, 0.3)) == pytest.approx(0.5 * 0.7 + 0.5 * 0.1)


@needs_release
def test_a_moved_number_fails_the_reproduction(tmp_path, capsys):
    """A release copy whose baseline file has one more GPT-4o-mini session judged correct (111/450 = 24.7%,
    printed 24.4%) fails the reproduction, and the difference names that number alone."""
    copy = tmp_path / "release"
    results = copy / "data" / "results"
    results.mkdir(parents=True)
    (copy / "paper").symlink_to(RESULTS.parents[1] / "paper")
    for path in RESULTS.iterdir():
        (results / path.name).symlink_to(path)
    rows = read_rows(RESULTS / "baseline_all_rejudged.csv")
    wrong = next(r for r in rows if r["model"] == "gpt4o_mini" and r["ensemble_correct"] == "False")
    wrong["ensemble_correct"] = "True"
    (results / "baseline_all_rejudged.csv").unlink()
    with (results / "baseline_all_rejudged.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert _script().main(["--release", str(copy)]) == 1
    diffs = [line for line in capsys.readouterr().out.splitlines() if line.startswith("DIFF")]
    assert diffs == ["DIFF gpt4o_mini ensemble correctness, baseline: 0.24667 (printed 0.244)"]


@needs_release
def test_numbers_over_thirteen_models_are_listed_not_reproduced(capsys):
    """The paper's 13-model numbers are printed as not recomputable and counted nowhere: the 9 released
    models give another Spearman (0.126) and hold fewer S2 traces than the paper's 271."""
    assert _script().main(["--release", str(RESULTS.parents[1])]) == 0
    out = capsys.readouterr().out
    for name, value in NEEDS_THIRTEEN_MODELS.items():
        assert f"not recomputable (needs the 13 models, 9 released): {name} = {value}" in out
    assert "221/221 printed numbers reproduced" in out
    hops = hop_rates(read_rows(RESULTS / "p2_all_rejudged.csv"))
    assert (
        round(rejection_recovery_spearman(hops), 3)
        != NEEDS_THIRTEEN_MODELS["rejection_recovery_spearman_rho"]
    )
    assert sum(h["n_S2"] for h in hops.values()) < 271
