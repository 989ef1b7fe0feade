"""An episode record's trace as a conversation: the one walk over a record that the exporters and the
viewer share (:mod:`.inspect_log`, :mod:`.view`).

A record (one line of a run's episodes.jsonl, read through :mod:`.run`) keeps every step of its
episode: the model's raw reply where the agent kept it, the calls as the agent sent them and as they
ran, each result or error, and for every write the modified fields before and after. :func:`transcript`
turns it back into what the agent saw, turn by turn, mirroring the messages the env sent
(``ToolEnv._step_messages`` and a scripted user's follow-ups):

* an assistant turn per step: the reply's text, the calls as the agent sent them (a hook's rewrite,
  such as a parameter injection, is kept apart as what was executed);
* a tool reply per call: the text the agent read (the step's observation, or the call's own JSON when
  the step answered several calls), the result or the error, the writes the call made;
* a user message where the action did not parse (the env answers with one) and where a scripted user
  followed up.

The record is untrusted input: a field of the wrong shape is read as empty, never a crash. Pure: the
same record gives the same transcript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .run import Record


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else empty (a run folder is untrusted input)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON list, else empty."""
    return value if isinstance(value, list) else []


def compact_json(value: Any) -> str:
    """Compact JSON as the env encodes observations (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def reply_content(raw: Any) -> str | None:
    """The text of a model's reply as the trace stored it: an OpenAI-format message as JSON (its
    ``content``), or the completion text itself; None when the step kept no reply (a scripted policy)."""
    if not isinstance(raw, str):
        return None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if isinstance(message, dict) and message.get("role") == "assistant":
        content = message.get("content")
        return content if isinstance(content, str) else ""
    return raw


def json_pointer(*parts: str) -> str:
    """A JSON Pointer (RFC 6901) to ``parts``: ``~`` and ``/`` inside a part escaped."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class FieldChange:
    """One field of a write: its value before and after (``op``: ``add`` when the field was absent
    before, ``remove`` when absent after, else ``replace``)."""

    name: str
    op: str
    before: Any = None
    after: Any = None


def field_changes(write: Mapping[str, Any]) -> list[FieldChange]:
    """The modified fields of one write record of a trace, each with its value before and after. A
    create lists the created entity's fields (nothing before), a delete the deleted one's (nothing after)."""
    action = write.get("action")
    before, after = write.get("before"), write.get("after")
    if action == "create":
        return [FieldChange(str(k), "add", None, v) for k, v in as_dict(after).items()]
    if action == "delete":
        return [FieldChange(str(k), "remove", v, None) for k, v in as_dict(before).items()]
    before, after = as_dict(before), as_dict(after)
    changes = []
    for name in as_list(write.get("fields")):
        name = str(name)
        if name not in after:
            changes.append(FieldChange(name, "remove", before.get(name), None))
        elif name not in before:
            changes.append(FieldChange(name, "add", None, after[name]))
        else:
            changes.append(FieldChange(name, "replace", before[name], after[name]))
    return changes


def write_patch(write: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch of one write record of a trace, applied to the state as
    ``{collection: {id: entity}}``: a create adds the entity as it was after, a delete removes it
    (``replaced``: the entity before), an update changes each modified field (``value`` after,
    ``replaced`` before; a field absent before is added, absent after removed)."""
    collection, _, entity_id = str(write.get("entity", "")).partition("/")
    path = json_pointer(collection, entity_id)
    action = write.get("action")
    if action == "create":
        return [{"op": "add", "path": path, "value": write.get("after")}]
    if action == "delete":
        return [{"op": "remove", "path": path, "replaced": write.get("before")}]
    patch = []
    for change in field_changes(write):
        entry: dict[str, Any] = {"op": change.op, "path": path + json_pointer(change.name)}
        if change.op != "remove":
            entry["value"] = change.after
        if change.op != "add":
            entry["replaced"] = change.before
        patch.append(entry)
    return patch


@dataclass(frozen=True)
class ToolReply:
    """One call of a turn and the reply the agent read.

    Attributes:
        call: The call record as the trace holds it (executed name and arguments, kind, intercept ...).
        index: The call's index in the episode (what a verdict's ``call_index`` names).
        name: The tool as the agent sent it.
        arguments: The arguments as the agent sent them.
        rewritten: Whether a hook changed the call before it ran (``call["name"]`` /
            ``call["arguments"]`` are then what ran, ``call["rewrites"]`` who changed it and why).
        ok: Whether the call succeeded.
        content: The text the agent read as the tool's reply.
        error: The error (``type``, ``message``) of a failed call, else empty.
        writes: The writes the call made (only a successful call's).
    """

    call: dict[str, Any]
    index: Any
    name: str
    arguments: Any
    rewritten: bool
    ok: bool
    content: str
    error: dict[str, Any]
    writes: list[dict[str, Any]]


@dataclass(frozen=True)
class Turn:
    """One step of the episode: the agent's reply and what answered it.

    Attributes:
        step: The step's number as the trace holds it.
        content: The reply's text (the model's raw reply where the agent kept it; a scripted policy's
            action itself when no call parsed from it; else empty).
        raw: Whether ``content`` is a model's own text (the trace kept the raw reply).
        action: The action text the env received.
        format: Where the call was found in the model's text (``openai``, ``hermes``, ``fenced`` ...).
        replies: One per call, in order.
        parse_error: When no call parsed: the env's answer to the action (a user message).
        follow_up: A scripted user's follow-up after this step, if any.
    """

    step: Any
    content: str
    raw: bool
    action: str
    format: Any
    replies: list[ToolReply] = field(default_factory=list)
    parse_error: str | None = None
    follow_up: str | None = None


def follow_ups(record: Record) -> dict[Any, str]:
    """A scripted user's follow-up turns of a record: step -> content."""
    trace = as_dict(record.get("trace"))
    return {
        t.get("step"): t.get("content")
        for t in map(as_dict, as_list(trace.get("user_turns")))
        if isinstance(t.get("content"), str)
    }


def step_turn(step: Mapping[str, Any], follow: Mapping[Any, str]) -> Turn:
    """The turn of one step of a trace (``follow``: :func:`follow_ups` of the record)."""
    number = step.get("step")
    calls = [as_dict(c) for c in as_list(step.get("calls"))]
    observation = step.get("observation") if isinstance(step.get("observation"), str) else ""
    content = reply_content(step.get("raw"))
    raw = content is not None
    action = step.get("action")
    action = action if isinstance(action, str) else str(action if action is not None else "")
    if content is None:  # a scripted policy: its action is the call itself (shown when nothing parsed)
        content = "" if calls else action
    turn = Turn(number, content, raw, action, step.get("format"), follow_up=follow.get(number))
    if not calls:  # the action did not parse: the env answered with a user message
        return replace(turn, parse_error=observation)
    several = len(calls) > 1 or observation.startswith("[")
    for call in calls:
        sent = "rewrites" in call  # a hook changed the call: the agent's own is what it sent
        name = call.get("sent_name") if sent else call.get("name")
        ok = call.get("ok") is True
        error = as_dict(call.get("error"))
        shown = {"tool": str(name), "ok": ok, **({"result": call.get("result")} if ok else {"error": error})}
        turn.replies.append(
            ToolReply(
                call=call,
                index=call.get("index"),
                name=str(name),
                arguments=call.get("sent_arguments") if sent else call.get("arguments"),
                rewritten=sent,
                ok=ok,
                content=compact_json(shown) if several else observation,
                error=error,
                writes=[as_dict(w) for w in as_list(call.get("writes"))] if ok else [],
            )
        )
    return turn


def transcript(record: Record) -> list[Turn]:
    """Every turn of a record's trace, in order (see the module docs). The user's request that opens
    the conversation is the record's ``instruction``."""
    trace = as_dict(record.get("trace"))
    follow = follow_ups(record)
    return [step_turn(as_dict(step), follow) for step in as_list(trace.get("steps"))]
