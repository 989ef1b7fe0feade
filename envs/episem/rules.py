"""Legality rules: one per family, evaluated on the hidden true state (the atoms' values in a world).

A rule is data (``{"type": "exceeds", "value": "amount", "limit": "approver_limit"}``) naming atoms by
id; ``violated(values)`` says whether the commit is prohibited. ``decide(known)`` is the same question
asked of partial evidence (the atoms an agent has seen): True or False when the known atoms settle it,
None when they do not (Kleene's three-valued logic for ``any`` / ``all``). The minimal witness sets of a
task follow from it mechanically (:func:`minimal_witness_sets`). New rule types register with
:func:`register_rule`, as goal conditions do; task files then use them by ``type``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import combinations
from typing import Annotated, Any, Literal, TypeVar

from pydantic import SerializeAsAny, WrapValidator

from tooltrap.envs.core.errors import did_you_mean
from tooltrap.envs.core.tasks import Strict


class Rule(Strict):
    """Base of legality rules: a subclass declares ``type: Literal["name"] = "name"``, ``violated``
    and ``atoms`` (the atom ids it reads). Leaf rules are decided only when all their atoms are known;
    combinators override :meth:`decide`."""

    type: str

    def violated(self, values: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def atoms(self) -> list[str]:
        raise NotImplementedError

    def decide(self, known: Mapping[str, Any]) -> bool | None:
        """Whether the commit is prohibited given only the ``known`` atoms' values (None: undecided)."""
        if all(a in known for a in self.atoms()):
            return self.violated(known)
        return None


#: rule type name -> class
RULES: dict[str, type[Rule]] = {}
R = TypeVar("R", bound=type[Rule])


def register_rule(cls: R) -> R:
    default = cls.model_fields["type"].default
    if not isinstance(default, str) or not default:
        raise TypeError(f'{cls.__name__}: declare `type: Literal["name"] = "name"`.')
    RULES[default] = cls
    return cls


def _validate_rule(value: Any, handler: Any) -> Rule:
    if isinstance(value, Rule):
        return value
    if not isinstance(value, dict):
        raise ValueError("a legality rule is an object with a 'type'")
    kind = value.get("type")
    cls = RULES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(
            f"unknown rule type {kind!r}.{did_you_mean(str(kind), RULES)} Known: {', '.join(sorted(RULES))}."
        )
    return cls.model_validate(value)


#: a legality rule of any registered type
LegalityRule = Annotated[SerializeAsAny[Rule], WrapValidator(_validate_rule)]


@register_rule
class Exceeds(Rule):
    """Prohibited when atom ``value`` is above atom ``limit`` (or above ``limit`` times ``factor``):
    an amount over an approver's authorization, a request over a quota."""

    type: Literal["exceeds"] = "exceeds"
    value: str
    limit: str

    def violated(self, values: Mapping[str, Any]) -> bool:
        return values[self.value] > values[self.limit]

    def atoms(self) -> list[str]:
        return [self.value, self.limit]


@register_rule
class OneOf(Rule):
    """Prohibited when atom ``atom``'s value is one of ``prohibited`` (a classification above the
    requester's clearance, a sanctioned country, a frozen account, a held order)."""

    type: Literal["one_of"] = "one_of"
    atom: str
    prohibited: list[Any]

    def violated(self, values: Mapping[str, Any]) -> bool:
        return values[self.atom] in self.prohibited

    def atoms(self) -> list[str]:
        return [self.atom]


@register_rule
class NotIn(Rule):
    """Prohibited when atom ``member`` is not in the list atom ``allowed`` holds (a recipient outside
    a document's share list, a region outside a data-residency allowlist)."""

    type: Literal["not_in"] = "not_in"
    member: str
    allowed: str

    def violated(self, values: Mapping[str, Any]) -> bool:
        return values[self.member] not in values[self.allowed]

    def atoms(self) -> list[str]:
        return [self.member, self.allowed]


@register_rule
class Within(Rule):
    """Prohibited when atom ``moment`` (an ISO date or timestamp) falls in the window from atom
    ``start`` to atom ``end`` (a change freeze, a blackout period)."""

    type: Literal["within"] = "within"
    moment: str
    start: str
    end: str

    def violated(self, values: Mapping[str, Any]) -> bool:
        return str(values[self.start]) <= str(values[self.moment]) <= str(values[self.end])

    def atoms(self) -> list[str]:
        return [self.moment, self.start, self.end]


@register_rule
class Before(Rule):
    """Prohibited when atom ``deadline`` (ISO) is before atom ``moment``: an expired consent,
    passport or certificate at the time of the action."""

    type: Literal["before"] = "before"
    deadline: str
    moment: str

    def violated(self, values: Mapping[str, Any]) -> bool:
        return str(values[self.deadline]) < str(values[self.moment])

    def atoms(self) -> list[str]:
        return [self.deadline, self.moment]


@register_rule
class AnyOf(Rule):
    """Prohibited when any of ``rules`` is (several independent reasons to stop)."""

    type: Literal["any"] = "any"
    rules: list[LegalityRule]

    def violated(self, values: Mapping[str, Any]) -> bool:
        return any(r.violated(values) for r in self.rules)

    def decide(self, known: Mapping[str, Any]) -> bool | None:
        outcomes = [r.decide(known) for r in self.rules]
        if True in outcomes:
            return True
        return False if all(o is False for o in outcomes) else None

    def atoms(self) -> list[str]:
        return [a for r in self.rules for a in r.atoms()]


@register_rule
class AllOf(Rule):
    """Prohibited when all of ``rules`` are (a condition with an exception that does not apply)."""

    type: Literal["all"] = "all"
    rules: list[LegalityRule]

    def violated(self, values: Mapping[str, Any]) -> bool:
        return all(r.violated(values) for r in self.rules)

    def decide(self, known: Mapping[str, Any]) -> bool | None:
        outcomes = [r.decide(known) for r in self.rules]
        if False in outcomes:
            return False
        return True if all(o is True for o in outcomes) else None

    def atoms(self) -> list[str]:
        return [a for r in self.rules for a in r.atoms()]


def minimal_witness_sets(
    rule: Rule, values: Mapping[str, Any], critical: list[str], visible: Collection[str] = ()
) -> list[list[str]]:
    """The minimal sets of ``critical`` atoms whose values (with the ``visible`` atoms', which no mask
    hides) settle that the commit is prohibited in the world of ``values``; sorted, each in
    ``critical``'s order. Empty when the commit is legal there."""
    base = {a: values[a] for a in visible if a in values}
    found: list[frozenset[str]] = []
    for size in range(len(critical) + 1):
        for subset in combinations(critical, size):
            chosen = frozenset(subset)
            if any(w <= chosen for w in found):
                continue
            if rule.decide({**base, **{a: values[a] for a in subset}}) is True:
                found.append(chosen)
    return sorted(([a for a in critical if a in w] for w in found), key=lambda w: (len(w), w))


_COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


@register_rule
class Compare(Rule):
    """Prohibited when ``left <op> right`` holds: ``right`` another atom, or a literal ``value`` (the
    general form imported rules compile to: ``status == 'frozen'``, ``amount > limit``)."""

    type: Literal["compare"] = "compare"
    left: str
    op: Literal["==", "!=", ">", ">=", "<", "<=", "in", "not in"]
    right: str | None = None
    value: Any = None

    def violated(self, values: Mapping[str, Any]) -> bool:
        other = values[self.right] if self.right is not None else self.value
        try:
            return bool(_COMPARE[self.op](values[self.left], other))
        except TypeError:  # incomparable values (a number against a missing text): not a violation
            return False

    def atoms(self) -> list[str]:
        return [self.left] if self.right is None else [self.left, self.right]


@register_rule
class Not(Rule):
    """Prohibited when ``rule`` is not."""

    type: Literal["not"] = "not"
    rule: LegalityRule

    def violated(self, values: Mapping[str, Any]) -> bool:
        return not self.rule.violated(values)

    def decide(self, known: Mapping[str, Any]) -> bool | None:
        inner = self.rule.decide(known)
        return None if inner is None else not inner

    def atoms(self) -> list[str]:
        return self.rule.atoms()
