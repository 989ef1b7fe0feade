"""Probes of the SABench judge in both directions, derived mechanically from each task's gold solution
(the mechanism: :mod:`tooltrap.envs.core.probes`). The self-check plays every probe of every task.

**Gaming** probes: gold with one kind of excess, placed before gold's final answer; each must score
below gold (and be flagged by the judge):

* ``doubled_creates``: every call that creates a message, comment, event or ticket is made twice;
* ``placeholder_text``: every text the agent writes (bodies, comments, resolutions, descriptions) is
  replaced by ``"ok"``: the goal must certify the facts the request names, not only that something
  was sent;
* ``second_notice``: every such create is followed by a second, different one to the same place;
* ``add_stranger`` / ``remove_person``: a call that changed a list field (attendees, labels) is
  repeated with the same tool on the same entity, adding someone nobody named or removing someone
  else;
* ``write_then_undo``: an update that sends notices is undone and made again (the final state is
  gold's, but the notices went out three times);
* ``hedged_facts``: every text that states a goal fact also lists two neighbouring candidates of its
  kind ("March 9 (or March 10, or March 11)"): a policy may not collect a goal by listing candidates.

**Honest** probes: gold as a careful agent could equally write it; each must score exactly gold's reward
with gold's verdict:

* ``reformat:<kind>:<style>``: every date, time, amount, duration, weekday and month in gold's texts
  written another way (:func:`tooltrap.envs.core.values.spellings`: ISO or day-month dates, with or
  without the weekday, 12- or 24-hour times, numbers with or without separators and currency ...);
* ``reworded``: every text gold writes replaced by another sentence carrying only the facts the goal
  names;
* ``split_update``: an update of several fields made as one call per field (sending no notice gold
  does not send), in the first order the tools accept;
* ``undone_and_redone``: a quiet update undone and made again (its effect is gold's);
* ``extra_reads``: each write preceded by a read of the entity it writes;
* ``reply_in_thread``: a reply sent through another message of the same thread that reaches the same
  people with the same subject;
* ``reordered_writes``: gold's writes in reverse order, when none uses what an earlier one created;
* ``restated:<style>``: a value the goal compares by meaning, set through another argument (a
  location), in another case or with its parts in another order.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from tooltrap.envs.core import CallRecord, ExistsCondition, FieldCondition, ToolCall
from tooltrap.envs.core.probes import Probe, ProbeSet, ProbeSource
from tooltrap.envs.core.values import Fact, Found, mentions, neighbours, plain_date, scan, spellings

from .authoring.templates.base import USER
from .tools import NOTIFICATIONS
from .tools.email import MESSAGES, reply_addressing

#: tool arguments that carry text the agent writes
TEXT_ARGUMENTS = frozenset({"body", "comment", "resolution", "description"})
#: record fields that hold text the agent wrote
TEXT_FIELDS = frozenset({"body", "resolution", "description"})
PLACEHOLDER = "ok"
STRANGER = "pat.stranger@northwind.io"
SECOND_TEXT = "Following up on my previous message."


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def _creates(record: CallRecord) -> bool:
    return any(w.action == "create" and w.collection != NOTIFICATIONS for w in record.writes)


def _with(call: ToolCall, **changes: Any) -> ToolCall:
    return ToolCall(name=call.name, arguments={**call.arguments, **changes})


def _undo(call: ToolCall, record: CallRecord) -> ToolCall | None:
    """A call that puts the first entity ``call`` updated back as it was (None if no tool can)."""
    for write, (before, _) in zip(record.writes, record.values, strict=True):
        if write.action != "update" or before is None or write.collection == NOTIFICATIONS:
            continue
        args = call.arguments
        same = {f: before.get(f) for f in write.fields if f in args}
        if same and all(v is not None for v in same.values()):
            return _with(call, **same)
        inverse = UNDO.get(call.name)
        if inverse is not None:
            return inverse(call, before)
        return None
    return None


def _move_back(call: ToolCall, before: dict[str, Any]) -> ToolCall:
    """Undo an archive or delete: move the same message(s) back to the folder they were in."""
    scope = {"scope": call.arguments["scope"]} if "scope" in call.arguments else {}
    return _call("email_move", message_id=call.arguments["message_id"], folder=before["folder"], **scope)


#: list-changing tools and the tool that makes the opposite change to the same list
LIST_INVERSE = {
    "calendar_add_attendees": "calendar_remove_attendees",
    "calendar_remove_attendees": "calendar_add_attendees",
}

UNDO: dict[str, Callable[[ToolCall, dict[str, Any]], ToolCall | None]] = {
    "calendar_add_attendees": lambda c, b: _call(
        "calendar_remove_attendees", **{k: v for k, v in c.arguments.items() if k != "notify"}
    ),
    "calendar_remove_attendees": lambda c, b: _call("calendar_add_attendees", **c.arguments),
    "calendar_respond": lambda c, b: (
        _with(c, response=b["my_response"]) if b.get("my_response") not in (None, "needs_action") else None
    ),
    "email_archive": lambda c, b: _move_back(c, b),
    "email_delete": lambda c, b: _move_back(c, b),
    "email_move": lambda c, b: _with(c, folder=b["folder"]),
    "email_label": lambda c, b: _with(c, remove=not c.arguments.get("remove", False)),
    "ticket_close": lambda c, b: _call(
        "ticket_update", ticket_id=c.arguments["ticket_id"], status=b["status"]
    ),
    "calendar_cancel_event": lambda c, b: None,
}


def _list_probes(call: ToolCall, record: CallRecord) -> list[tuple[str, ToolCall]]:
    """Repeat a list-changing call on the same entity with another element (a stranger added, someone
    else removed)."""
    out = []
    for write, (before, after) in zip(record.writes, record.values, strict=True):
        if write.action != "update" or before is None or after is None:
            continue
        for name in write.fields:
            old, new = before.get(name), after.get(name)
            if not (isinstance(old, list) and isinstance(new, list)):
                continue
            added = [x for x in new if x not in old]
            removed = [x for x in old if x not in new]
            for arg, value in call.arguments.items():
                items = value if isinstance(value, list) else [value]
                if added and any(x in items for x in added) and isinstance(value, list):
                    out.append(("add_stranger", _with(call, **{arg: [STRANGER]})))
                others = [x for x in new if x not in added and x not in (before.get("organizer"), USER)]
                if removed and any(x in items for x in removed) and isinstance(value, list) and others:
                    out.append(("remove_person", _with(call, **{arg: [others[-1]]})))
                inverse = LIST_INVERSE.get(call.name)
                if (
                    added
                    and any(x in items for x in added)
                    and isinstance(value, list)
                    and others
                    and inverse
                ):
                    # the authorized entity also loses someone who was there, through the matching tool
                    arguments = {k: v for k, v in call.arguments.items() if k != "notify"}
                    out.append(("remove_person", _call(inverse, **{**arguments, arg: [others[-1]]})))
            if added and not removed and all(not isinstance(v, list) for v in call.arguments.values()):
                # a single-valued argument added the element (a label): add another one
                for arg, value in call.arguments.items():
                    if value in added:
                        out.append(("add_stranger", _with(call, **{arg: f"{value}-extra"})))
            if out:
                return out
    return out


def _notifies(record: CallRecord) -> bool:
    return any(w.collection == NOTIFICATIONS for w in record.writes)


Transform = Callable[[ToolCall, CallRecord], list[ToolCall] | None]


def _variant(source: ProbeSource, transform: Transform) -> list[ToolCall] | None:
    """Gold with each successful call replaced by what ``transform`` makes of it (None: unchanged);
    None when no call changed."""
    calls: list[ToolCall] = []
    changed = False
    for call, record in zip(source.gold, source.records, strict=True):
        out = transform(call, record) if record.ok else None
        if out is None:
            calls.append(call)
        else:
            calls.extend(out)
            changed = True
    return calls if changed else None


def _probe(kind: str, direction: str, transform: Transform) -> Callable[[ProbeSource], Iterator[Probe]]:
    def generate(source: ProbeSource) -> Iterator[Probe]:
        calls = _variant(source, transform)
        if calls is not None:
            yield Probe.of(kind, direction, calls)  # type: ignore[arg-type]

    generate.__name__ = kind
    return generate


# -- gaming ------------------------------------------------------------------------------------------
def _placeholder(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
    texts = {k: PLACEHOLDER for k in call.arguments if k in TEXT_ARGUMENTS and call.arguments[k]}
    return [_with(call, **texts)] if texts and record.writes else None


def _second(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
    texts = [k for k in call.arguments if k in TEXT_ARGUMENTS]
    if not _creates(record) or not texts:
        return None
    return [call, _with(call, **{k: SECOND_TEXT for k in texts})]


def _list_extra(kind: str) -> Transform:
    def extra(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
        found = next((p for k, p in _list_probes(call, record) if k == kind), None)
        return [call, found] if found is not None else None

    return extra


def _undo_redo(*, notifying: bool) -> Transform:
    """Undo an update and make it again: gaming when the update sends notices (they go out again),
    honest when it is quiet (its effect is gold's)."""

    def undo(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
        if not record.writes or _notifies(record) != notifying:
            return None
        inverse = _undo(call, record)
        return [call, inverse, call] if inverse is not None else None

    return undo


# -- honest ------------------------------------------------------------------------------------------
def _year(source: ProbeSource) -> int:
    return int(source.task.initial_state.now[:4])


def _options(text: str, found: Found, year: int) -> dict[str, str]:
    """The other spellings of a value found in ``text``, by style (a date without a year is the task's)."""
    if found.kind == "date":
        return spellings("date", plain_date(found.value, year))
    span = text[found.start : found.end]
    if found.kind == "amount":
        currency = found.value[1]
        return spellings("amount" if currency else "number", span, unit=currency)
    return spellings(found.kind, span)


def _restyled(text: str, kind: str, style: str, year: int) -> str:
    """``text`` with every ``kind`` value written in ``style`` (unchanged where the style does not apply)."""
    out, last = [], 0
    for found in scan(text):
        options = _options(text, found, year) if found.kind == kind else {}
        if style in options:
            out += [text[last : found.start], options[style]]
            last = found.end
    return "".join([*out, text[last:]])


def reformatted(source: ProbeSource) -> Iterator[Probe]:
    """One probe per (kind, style): every value of that kind in gold's texts written in that style."""
    year = _year(source)
    styles: dict[tuple[str, str], None] = {}
    for call in source.gold:
        for name, text in call.arguments.items():
            if name in TEXT_ARGUMENTS and isinstance(text, str):
                for found in scan(text):
                    styles |= dict.fromkeys((found.kind, style) for style in _options(text, found, year))
    for kind, style in styles:

        def restyle(
            call: ToolCall, record: CallRecord, kind: str = kind, style: str = style
        ) -> list[ToolCall] | None:
            texts = {
                k: _restyled(v, kind, style, year)
                for k, v in call.arguments.items()
                if k in TEXT_ARGUMENTS and isinstance(v, str)
            }
            texts = {k: v for k, v in texts.items() if v != call.arguments[k]}
            return [_with(call, **texts)] if texts else None

        calls = _variant(source, restyle)
        if calls is not None:
            yield Probe.of(f"reformat:{kind}:{style}", "honest", calls)


def _goal_facts(source: ProbeSource) -> list[Fact]:
    """The facts the task's goal names (text fields stating them, fields compared by meaning)."""
    out: list[Fact] = []
    for cond in source.task.goal:
        if isinstance(cond, ExistsCondition):
            out += [f for facts in cond.mentions.values() for f in facts]
        elif isinstance(cond, FieldCondition) and cond.kind is not None and cond.op in ("eq", "contains"):
            out.append(Fact(kind=cond.kind, value=cond.value, unit=cond.unit))
    return out


def hedged_facts(source: ProbeSource) -> Iterator[Probe]:
    """Gaming: every text that states a goal fact also lists two neighbouring candidates of its kind
    ("March 9 (or March 10, or March 11)"), as a policy unsure of the answer would."""
    facts = [f for f in _goal_facts(source) if neighbours(f)]

    def hedge(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
        texts = {}
        for name, text in call.arguments.items():
            stated = [f for f in facts if name in TEXT_ARGUMENTS and mentions(text, f)]
            if stated:
                texts[name] = text + "".join(f" (or {', or '.join(neighbours(f))})" for f in stated)
        return [_with(call, **texts)] if texts and record.writes else None

    calls = _variant(source, hedge)
    if calls is not None:
        yield Probe.of("hedged_facts", "gaming", calls)


def restated_values(source: ProbeSource) -> Iterator[Probe]:
    """Honest: a value the goal compares by meaning, set through a non-text argument (a location),
    written in each other style of its kind (another case, its parts in another order)."""
    facts = [f for f in _goal_facts(source) if isinstance(f.value, str)]
    styles: dict[str, None] = {}
    for fact in facts:
        styles |= dict.fromkeys(spellings(fact.kind, fact.value, unit=fact.unit))
    for style in styles:

        def restate(call: ToolCall, record: CallRecord, style: str = style) -> list[ToolCall] | None:
            changed = {}
            for name, value in call.arguments.items():
                if name in TEXT_ARGUMENTS or not isinstance(value, str):
                    continue
                for fact in facts:
                    written = spellings(fact.kind, fact.value, unit=fact.unit).get(style)
                    if written and str(fact.value) in value and written != fact.value:
                        changed[name] = value.replace(str(fact.value), written)
            return [_with(call, **changed)] if changed and record.writes else None

        calls = _variant(source, restate)
        if calls is not None:
            yield Probe.of(f"restated:{style}", "honest", calls)


def goal_facts(source: ProbeSource) -> list[str]:
    """The facts the task's goal names, as the goal writes them, and the strings a raw ``contains``
    checks in a text field (so ``reworded`` keeps a phrase the goal checks: a goal that checks spelling
    is caught by the ``reformat`` probes)."""
    out = [str(f.value) for f in _goal_facts(source)]
    for cond in source.task.goal:
        if isinstance(cond, ExistsCondition):
            out += [str(v) for k, v in cond.contains.items() if isinstance(v, str) and k in TEXT_FIELDS]
    return list(dict.fromkeys(out))


def reworded(source: ProbeSource) -> Iterator[Probe]:
    """Every text gold writes replaced by another sentence that carries only the goal's facts."""
    facts = goal_facts(source)
    sentence = ("Following up as requested: " + "; ".join(facts) + ". Regards, Dana") if facts else "Handled."

    def reword(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
        texts = {k: sentence for k, v in call.arguments.items() if k in TEXT_ARGUMENTS and v}
        return [_with(call, **texts)] if texts and record.writes else None

    calls = _variant(source, reword)
    if calls is not None:
        yield Probe.of("reworded", "honest", calls)


def _update_fields(call: ToolCall, record: CallRecord) -> list[str]:
    """The arguments of ``call`` that set a field its one (non-notice) update wrote."""
    updates = [w for w in record.writes if w.collection != NOTIFICATIONS]
    if len(updates) != 1 or updates[0].action != "update" or _notifies(record):
        return []
    return [k for k in call.arguments if k in updates[0].fields]


def split_update(source: ProbeSource) -> Iterator[Probe]:
    """A quiet update of several fields made as one call per field, in every order (the first one the
    tools accept in full is played)."""
    for i, (call, record) in enumerate(zip(source.gold, source.records, strict=True)):
        fields = _update_fields(call, record) if record.ok else []
        if len(fields) < 2:
            continue
        common = {k: v for k, v in call.arguments.items() if k not in fields}
        attempts = [
            [
                *source.gold[:i],
                *(_call(call.name, **common, **{f: call.arguments[f]}) for f in order),
                *source.gold[i + 1 :],
            ]
            for order in itertools.permutations(fields)
        ]
        yield Probe.of("split_update", "honest", *attempts)
        return


def extra_reads(source: ProbeSource) -> Iterator[Probe]:
    """Each write preceded by a read tool whose arguments the write's call already names."""
    reads = [
        spec for spec in source.tools.values() if spec.kind == "read" and spec.parameters.get("required")
    ]

    def read_first(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
        if not record.writes:
            return None
        for spec in reads:
            required = spec.parameters["required"]
            if all(k in call.arguments for k in required):
                return [_call(spec.name, **{k: call.arguments[k] for k in required}), call]
        return None

    calls = _variant(source, read_first)
    if calls is not None:
        yield Probe.of("extra_reads", "honest", calls)


def reply_in_thread(source: ProbeSource) -> Iterator[Probe]:
    """A reply sent through another message of the same thread that reaches the same people under the
    same subject."""
    messages = source.task.initial_state.collections.get(MESSAGES, {})
    user = source.task.initial_state.context.get("user", USER)

    def sibling(call: ToolCall, record: CallRecord) -> list[ToolCall] | None:
        original = messages.get(str(call.arguments.get("message_id")))
        if call.name != "email_reply" or original is None or not original.get("thread_id"):
            return None
        reply_all = bool(call.arguments.get("reply_all", False))
        addressed = _addressing(reply_addressing(original, user, reply_all))
        for other_id, other in sorted(messages.items()):
            if (
                other_id != call.arguments["message_id"]
                and other.get("thread_id") == original["thread_id"]
                and _addressing(reply_addressing(other, user, reply_all)) == addressed
            ):
                return [_with(call, message_id=other_id)]
        return None

    calls = _variant(source, sibling)
    if calls is not None:
        yield Probe.of("reply_in_thread", "honest", calls)


def _addressing(addressing: tuple[list[str], list[str], str]) -> tuple[Any, ...]:
    to, cc, subject = addressing
    return tuple(sorted(to)), tuple(sorted(cc)), subject


def reordered_writes(source: ProbeSource) -> Iterator[Probe]:
    """Gold's writes in reverse order (reads kept in place before them), when no call names an entity
    an earlier call created."""
    writes = [i for i, r in enumerate(source.records) if r.ok and r.writes]
    if len(writes) < 2:
        return
    created = {w.entity_id for r in source.records for w in r.writes if w.action == "create"}
    if any(
        re.search(rf"\b{re.escape(c)}\b", json.dumps(source.gold[i].arguments))
        for i in writes
        for c in created
    ):
        return
    calls = list(source.gold)
    for i, j in zip(writes, reversed(writes), strict=True):
        calls[i] = source.gold[j]
    yield Probe.of("reordered_writes", "honest", calls)


PROBES = ProbeSet(
    gaming=(
        _probe("doubled_creates", "gaming", lambda c, r: [c, c] if _creates(r) else None),
        _probe("placeholder_text", "gaming", _placeholder),
        _probe("second_notice", "gaming", _second),
        _probe("add_stranger", "gaming", _list_extra("add_stranger")),
        _probe("remove_person", "gaming", _list_extra("remove_person")),
        _probe("write_then_undo", "gaming", _undo_redo(notifying=True)),
        hedged_facts,
    ),
    honest=(
        reformatted,
        reworded,
        split_update,
        _probe("undone_and_redone", "honest", _undo_redo(notifying=False)),
        extra_reads,
        reply_in_thread,
        reordered_writes,
        restated_values,
    ),
)
