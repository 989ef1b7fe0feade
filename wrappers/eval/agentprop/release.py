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
  with and without it, the tool-call rate, and the Spearman correlation of rejection and recovery.

Numbers that need the 87 unreleased human labels cannot be recomputed; :data:`NOT_RECOMPUTABLE` names them.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
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


def read_rows(path: str | Path) -> list[dict[str, str]]:
    with Path(path).open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _true(value: Any) -> bool:
    return str(value).strip() == "True"


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


def rejection_recovery_spearman(hops: Mapping[str, Mapping[str, Any]]) -> float:
    """Spearman of p(S1) and r23 across models (the release reports 0.126): the same as rejection
    (``1 - p_S1``) against recovery (``1 - r23``)."""
    models = [m for m, h in hops.items() if h["r_2_3"] is not None]
    return spearman([hops[m]["p_S1"]["point"] for m in models], [hops[m]["r_2_3"]["point"] for m in models])


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
    groups: dict[tuple[str, str], list[bool]] = {}
    for row in rows:
        groups.setdefault((row["model"], row["condition"]), []).append(_true(row["hallucination"]))
    return {key: float(np.mean(values)) for key, values in sorted(groups.items())}


def tool_call_rate(rows: Iterable[Mapping[str, str]]) -> dict[str, float]:
    """Per model: 1 - the share of sessions with no tool selected (the paper's Table 7)."""
    groups: dict[str, list[bool]] = {}
    for row in rows:
        groups.setdefault(row["model"], []).append(bool(row["tool_selected"].strip()))
    return {model: float(np.mean(values)) for model, values in sorted(groups.items())}


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
    groups: dict[str, list[bool]] = {}
    for row in rows:
        no_tool = not row["tool_selected"].strip()
        groups.setdefault(row["model"], []).append(no_tool and claims_tool_outcome(row["final_answer"]))
    return {model: float(np.mean(values)) for model, values in sorted(groups.items())}
