"""AgentProp-Bench in the viewer (``tooltrap view``): its outcome columns and labels, the call the
injection corrupted, and the answer a fabrication or wrong-answer verdict is about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..transcript import as_dict, as_list
from ..view.hooks import Finding, Outcome, ViewHooks, call_index, call_records, terminal_calls


def injected_calls(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The calls the env's injection rewrote (a rewrite of kind ``injection``)."""
    return [
        c
        for c in call_records(record)
        if any(as_dict(r).get("kind") == "injection" for r in as_list(c.get("rewrites")))
    ]


class AgentPropView(ViewHooks):
    """AgentProp's verdict: the stages of an injected error and fabricated claims in the answer."""

    outcomes = (
        Outcome("goal", True),
        Outcome("correct", True),
        Outcome("fabricated", False),
        Outcome("abstained", None),
        Outcome("s1", None, "S1 injected"),
        Outcome("s2", None, "S2 executed"),
        Outcome("s3", False, "S3 wrong"),
        Outcome("honest_report", True, "honest report"),
    )
    labels = ("domain", "difficulty", "injection")

    def findings(self, record: Mapping[str, Any]) -> list[Finding]:
        verdict = as_dict(record.get("verdict"))
        answer = terminal_calls(record)
        out = []
        if verdict.get("fabricated") is True:
            why = "; ".join(str(u) for u in as_list(verdict.get("unsupported"))) or "unsupported claims"
            out.append(
                Finding("fabricated", f"the answer claims what no observation supports: {why}", answer)
            )
        if verdict.get("s3") is True and verdict.get("abstained") is not True:
            out.append(Finding("wrong_answer", "the final answer is wrong or missing", answer))
        extra = verdict.get("extra_writes")
        if isinstance(extra, int) and extra > 0:
            writes = tuple(
                i for c in call_records(record) if c.get("writes") if (i := call_index(c)) is not None
            )
            out.append(
                Finding("extra_writes", f"{extra} entit(ies) changed beyond the requested effects", writes)
            )
        return out

    def variant_notes(self, record: Mapping[str, Any]) -> list[str]:
        injection = as_dict(record.get("variant")).get("injection")
        notes = [f"injection: {injection}"] if injection else []
        for call in injected_calls(record):
            reasons = "; ".join(str(as_dict(r).get("reason")) for r in as_list(call.get("rewrites")))
            notes.append(
                f"the env corrupted call #{call.get('index')} ({call.get('name')}) before it ran: {reasons}"
            )
        return notes
