"""Reproduction of the AgentProp-Bench release's printed numbers from its result files (MIT; a user's
copy, read where it lies: ``../shared/data/agentprop-release`` here). Pure functions over the rows.

* :func:`release_interval` is the bootstrap that printed the release's intervals: a fresh
  ``numpy.random.default_rng(42)`` per interval, ``rng.choice(values, size=n, replace=True)`` 1,000
  times, percentiles by linear interpolation at 2.5 / 97.5 (integer-index resampling draws others);
* :func:`hop_rates` rebuilds ``hop_rates.json`` from ``p2_all_rejudged.csv`` (semantic_wrong rows; the
  release's S1 = ``eps >= 1``, S2 = ``eps >= 2``, S3 = not ensemble-correct: its S1/S2 come from the
  ``eps`` column, a tool error on the injected call plus a heuristic-wrong answer, not from "injection
  applied" as this library's env defines them);
* :func:`results_table` rebuilds Table 1 (``baseline_all.csv`` + ``p2_all.csv``) and the retail Table 5
  (``baseline_retail.csv`` + ``p2_retail.csv``); :func:`read_latex_table` reads the printed cells. Two
  captions say more than the numbers show: "correctness judged by 3-LLM ensemble", yet the printed
  percentages are ``final_correct`` (the substring heuristic, equal to ``heuristic_correct`` in the
  rejudged files); "P2-semantic-wrong", yet ``n_P2`` = 800 is all four injection types;
* judge agreement (heuristic vs the ensemble majority, Cohen's kappa), the interceptor's hallucination
  with and without it, the tool-call rate, and the Spearman correlation of rejection and recovery;
* the paper's text numbers over the judges: "P2 correctness" (:func:`ensemble_correctness` on the baseline
  sessions, :func:`injected_correctness` after the injection), the heuristic's over-count
  (:func:`heuristic_overcount`), the injection-to-error range with and without the printed human
  calibration (:func:`injection_to_error_range`, :func:`human_calibrated_error`), and each model's
  rejection and recovery (:func:`rejection_and_recovery`).

Numbers that need the 87 unreleased human labels cannot be recomputed; :data:`NOT_RECOMPUTABLE` names them.
Nor can those over the paper's 13 models that its 4 unreleased open-weight models enter
(:data:`NEEDS_THIRTEEN_MODELS`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..stats import cohens_kappa, spearman

#: printed numbers that depend on the unreleased human labels
NOT_RECOMPUTABLE = {
    "human_vs_heuristic_kappa": 0.049,
    "human_vs_ensemble_kappa": 0.432,
    "human_vs_gpt4o_kappa": 0.567,
    "calibrated_correct_rate": 0.62,
}

#: printed numbers over the paper's 13 models (9 proprietary, released; 4 open-weight, whose rows are not):
#: the rejection/recovery Spearman (the 9 give the release's own 0.126); the per-model range of the
#: calibrated r23 whose mean is the 0.62 above (with the printed calibration the 9 already reach 0.74 at
#: GPT-4.1-nano, so 0.73 also needs the labels' unrounded 19/75); the rates pooled over every model's
#: traces (r23 = 217/271 S2 traces, of which the 9 hold fewer; calibrated, 0.65); the open-weight
#: interceptor run
NEEDS_THIRTEEN_MODELS = {
    "rejection_recovery_spearman_rho": 0.041,
    "rejection_recovery_spearman_p": 0.893,
    "calibrated_r23_range_low": 0.46,
    "calibrated_r23_range_high": 0.73,
    "pooled_r23": 0.80,
    "pooled_calibrated_r23": 0.65,
    "pooled_injection_to_error_ensemble": 0.71,
    "pooled_injection_to_error_gpt4o_mini_judge": 0.61,
    "qwen25_7b_interceptor_reduction_pp": 24.0,
}

#: the paper's human calibration of the ensemble (its Appendix B, from the 100 labels) as printed:
#: P(human correct | ensemble correct), P(human correct | ensemble wrong)
PRINTED_CALIBRATION = (0.76, 0.25)

#: injection-to-error of the 4 open-weight models as the paper prints them (Qwen2.5-3B/7B/14B,
#: Hermes-3-Llama-8B; no rows released): its ranges are over all 13 models, and these lie inside the
#: released 9's range, so the range stays recomputable
OPEN_WEIGHT_INJECTION_TO_ERROR = {
    "qwen25_3b": 0.74,
    "qwen25_7b": 0.63,
    "qwen25_14b": 0.65,
    "hermes3_llama_8b": 0.67,
}


def read_rows(path: str | Path) -> list[dict[str, str]]:
    with Path(path).open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _true(value: Any) -> bool:
    return str(value).strip() == "True"


def _mean_by(
    rows: Iterable[Mapping[str, str]],
    key: Callable[[Mapping[str, str]], Hashable],
    value: Callable[[Mapping[str, str]], bool],
) -> dict[Any, float]:
    """The mean of ``value`` over the rows of each ``key``, keys sorted."""
    groups: dict[Any, list[bool]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(value(row))
    return {k: float(np.mean(values)) for k, values in sorted(groups.items())}


def _model(row: Mapping[str, str]) -> str:
    return row["model"]


def release_interval(
    values: Sequence[float], n_resamples: int = 1000, seed: int = 42
) -> dict[str, float] | None:
    """``{"point", "lo", "hi"}`` as the release computed them (see the module docstring)."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return None
    rng = np.random.default_rng(seed)
    means = [rng.choice(array, size=array.size, replace=True).mean() for _ in range(n_resamples)]
    low, high = np.percentile(means, [2.5, 97.5])
    return {"point": float(array.mean()), "lo": float(low), "hi": float(high)}


def hop_rates(rows: Iterable[Mapping[str, str]]) -> dict[str, dict[str, Any]]:
    """``hop_rates.json`` per model from ``p2_all_rejudged.csv`` rows."""
    by_model: dict[str, list[Mapping[str, str]]] = {}
    for row in rows:
        if row["error_type"] == "semantic_wrong":
            by_model.setdefault(row["model"], []).append(row)
    out = {}
    for model, group in sorted(by_model.items()):
        s1 = [int(float(r["eps"]) >= 1) for r in group]
        s2 = [int(float(r["eps"]) >= 2) for r in group]
        s3 = [int(not _true(r["ensemble_correct"])) for r in group]
        out[model] = {
            "n": len(group),
            "n_S1": sum(s1),
            "n_S2": sum(s2),
            "n_S3": sum(s3),
            "p_S1": release_interval(s1),
            "p_S2": release_interval(s2),
            "p_S3": release_interval(s3),
            "r_1_2": round(float(np.mean(s2) / np.mean(s1)), 4) if sum(s1) else None,
            "r_2_3": release_interval([c for b, c in zip(s2, s3, strict=True) if b]),
            "injection_to_error": release_interval([c for b, c in zip(s1, s3, strict=True) if b]),
        }
    return out


def rejection_and_recovery(hops: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per model: rejection = ``1 - p_S1`` and recovery = ``1 - r23`` (None without an S2 session)."""
    return {
        model: {
            "rejection": 1.0 - h["p_S1"]["point"],
            "recovery": None if h["r_2_3"] is None else 1.0 - h["r_2_3"]["point"],
        }
        for model, h in hops.items()
    }


def rejection_recovery_spearman(hops: Mapping[str, Mapping[str, Any]]) -> float:
    """Spearman of rejection and recovery across models (the release reports 0.126 over its 9 models, the
    paper 0.041 over 13): the same as p(S1) against r23, both being reversed."""
    both = [r for r in rejection_and_recovery(hops).values() if r["recovery"] is not None]
    return spearman([r["rejection"] for r in both], [r["recovery"] for r in both])


def injected_correctness(hops: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Per model: the paper's "P2 correctness" (GPT-4o-mini 16.2%, o3-mini 24.3%), the ensemble-correct
    share of the injected (S1) semantic_wrong sessions, i.e. ``1 - injection_to_error``.

    Taken as that complement on purpose: GPT-4o-mini's 13/80 is an exact tie at the printed precision
    (16.25%); the float complement of the released 0.8375 is 0.16249999..., which rounds to the printed
    16.2 (13/80 itself, 0.16250000000000000555, would round to 16.3)."""
    return {
        model: 1.0 - h["injection_to_error"]["point"]
        for model, h in hops.items()
        if h["injection_to_error"] is not None
    }


def ensemble_correctness(rows: Iterable[Mapping[str, str]]) -> dict[str, float]:
    """Per model: the share of sessions the ensemble majority judged correct (``ensemble_correct``); on
    ``baseline_all_rejudged.csv`` the baseline side of "P2 correctness" (GPT-4o-mini 24.4%, o3-mini 36.0%)."""
    return _mean_by(rows, _model, lambda row: _true(row["ensemble_correct"]))


def heuristic_overcount(rows: Iterable[Mapping[str, str]]) -> float:
    """How far the substring heuristic's correctness exceeds the ensemble's over the semantic_wrong
    sessions of ``p2_all_rejudged.csv``, pooled (the paper's 34 pp)."""
    injected = [row for row in rows if row["error_type"] == "semantic_wrong"]
    return float(
        np.mean([_true(row["heuristic_correct"]) for row in injected])
        - np.mean([_true(row["ensemble_correct"]) for row in injected])
    )


def human_calibrated_error(
    ensemble_error: float, calibration: tuple[float, float] = PRINTED_CALIBRATION
) -> float:
    """P(human says wrong) for a rate of ensemble-wrong verdicts, given ``calibration`` = (P(human correct
    | ensemble correct), P(human correct | ensemble wrong))."""
    correct_if_correct, correct_if_wrong = calibration
    return ensemble_error * (1.0 - correct_if_wrong) + (1.0 - ensemble_error) * (1.0 - correct_if_correct)


def injection_to_error_range(
    hops: Mapping[str, Mapping[str, Any]], *, calibrated: bool = False
) -> tuple[float, float]:
    """(lowest, highest) injection-to-error over the paper's 13 models: the released models' rates and the
    printed open-weight ones (:data:`OPEN_WEIGHT_INJECTION_TO_ERROR`), through
    :func:`human_calibrated_error` when ``calibrated`` (the paper's 0.57-0.90 and 0.53-0.70)."""
    rates = [h["injection_to_error"]["point"] for h in hops.values() if h["injection_to_error"] is not None]
    rates += OPEN_WEIGHT_INJECTION_TO_ERROR.values()
    if calibrated:
        rates = [human_calibrated_error(rate) for rate in rates]
    return min(rates), max(rates)


def ensemble_agreement(rows: Sequence[Mapping[str, str]]) -> dict[str, float]:
    """On ``ensemble_judge.csv``: heuristic vs majority kappa, the unanimous rate, each judge's kappa."""
    majority = [_true(r["majority"]) for r in rows]
    out = {
        "n": len(rows),
        "heuristic_kappa": cohens_kappa([_true(r["heuristic_correct"]) for r in rows], majority),
        "unanimous_rate": float(
            np.mean([_true(r["unanimous_yes"]) or _true(r["unanimous_no"]) for r in rows])
        ),
    }
    for judge in ("gpt4o", "gemini_25_flash", "gpt4o_mini"):
        out[f"{judge}_kappa"] = cohens_kappa([_true(r[f"{judge}_verdict"]) for r in rows], majority)
    return out


def judge_agreement(rows: Sequence[Mapping[str, str]]) -> dict[str, float]:
    """On ``judge_agreement.csv``: raw agreement and kappa of the heuristic against the oracle judge."""
    heuristic = [_true(r["heuristic_correct"]) for r in rows]
    oracle = [_true(r["oracle_correct"]) for r in rows]
    return {
        "n": len(rows),
        "raw_agreement": float(np.mean(np.asarray(heuristic) == np.asarray(oracle))),
        "cohens_kappa": cohens_kappa(heuristic, oracle),
    }


def interceptor_hallucination(rows: Iterable[Mapping[str, str]]) -> dict[tuple[str, str], float]:
    """(model, condition) -> the hallucination rate (not abstained and not correct) of interceptor files."""
    return _mean_by(
        rows, lambda row: (row["model"], row["condition"]), lambda row: _true(row["hallucination"])
    )


def tool_call_rate(rows: Iterable[Mapping[str, str]]) -> dict[str, float]:
    """Per model: 1 - the share of sessions with no tool selected (the paper's Table 7)."""
    return _mean_by(rows, _model, lambda row: bool(row["tool_selected"].strip()))


def results_table(
    baseline: Iterable[Mapping[str, str]], p2: Iterable[Mapping[str, str]]
) -> dict[str, dict[str, Any]]:
    """Per model: ``n_B``, ``n_P2``, and the release intervals of baseline correctness, P2 correctness
    and the mean ``eps`` (Table 1 / Table 5; None where a model has no rows)."""
    correct: dict[str, dict[str, list[float]]] = {}
    eps: dict[str, list[float]] = {}
    for arm, rows in (("baseline", baseline), ("p2", p2)):
        for row in rows:
            correct.setdefault(row["model"], {"baseline": [], "p2": []})[arm].append(
                float(_true(row["final_correct"]))
            )
            if arm == "p2":
                eps.setdefault(row["model"], []).append(float(row["eps"]))
    return {
        model: {
            "n_B": len(arms["baseline"]),
            "n_P2": len(arms["p2"]),
            "baseline": release_interval(arms["baseline"]),
            "p2": release_interval(arms["p2"]),
            "eps": release_interval(eps.get(model, [])),
        }
        for model, arms in sorted(correct.items())
    }


def read_latex_table(path: str | Path) -> dict[str, list[str]]:
    """The body rows of one of the release's LaTeX tables: first cell (unescaped) -> the other cells."""
    rows: dict[str, list[str]] = {}
    body = Path(path).read_text(encoding="utf-8").split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    for line in body.split("\\\\"):
        cells = [c.strip() for c in line.split("&")]
        if len(cells) > 1:
            rows[cells[0].replace("\\_", "_")] = cells[1:]
    return rows


def format_interval(interval: Mapping[str, float] | None, scale: float = 1.0, digits: int = 1) -> str:
    """An interval as the release's tables print it: ``point [lo, hi]``, or ``--`` for none."""
    if interval is None:
        return "--"
    p, lo, hi = (scale * interval[k] for k in ("point", "lo", "hi"))
    return f"{p:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def heuristic_correct(answer: str, reference: str) -> bool:
    """The release's substring heuristic: the first 20 characters of the lower-cased reference in the
    first 200 characters of the answer, or any of the reference's first 3 words longer than 3 characters
    in the answer."""
    a, r = (answer or "").lower(), (reference or "").lower()
    if not a or not r:
        return False
    if r[:20] in a[:200]:
        return True
    return any(len(w) > 3 and w in a for w in r.split()[:3])


#: claims of a tool outcome in a final answer: a write done, an id, a temperature, JSON, a listing of
#: events, a patient's medications (the release's own classifier is unreleased; this rule reproduces
#: its Gemini-2.0-Flash rate)
TOOL_OUTCOME_CLAIM = re.compile(
    r"\b(created|scheduled|deleted|booked|cancel(l)?ed|placed|confirmed)\b|\b(EVT|APT|ORD|PRD)_?\d+"
    r"|-?\d+(\.\d+)?\s*(°|degrees|celsius|fahrenheit)|\{\s*\"|\bhere are the events\b|\bis currently taking\b",
    re.I,
)


def claims_tool_outcome(answer: str) -> bool:
    """Whether an answer asserts something only a tool could have told (see :data:`TOOL_OUTCOME_CLAIM`)."""
    return bool(TOOL_OUTCOME_CLAIM.search(answer or ""))


def fabrication_without_tools(rows: Iterable[Mapping[str, str]]) -> dict[str, float]:
    """Per model: the share of sessions whose answer claims a tool outcome although no tool was called
    (the release-answer proxy of fabrication; the env's own definition reads the trace)."""
    return _mean_by(
        rows,
        _model,
        lambda row: not row["tool_selected"].strip() and claims_tool_outcome(row["final_answer"]),
    )
