"""SABench task model: the core Task plus authorization, trap solutions and act-first intent."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from tooltrap.envs.core import Task, ToolCall
from tooltrap.envs.core.tasks import Strict

TrapFamily = Literal["ambiguity", "cascade", "mis_targeting", "overreach"]
StateStructure = Literal["independent", "dependent", "external", "cross_tool"]
Rule = Literal["wrong_entity", "scope_expansion", "unresolved_ambiguity", "tool_boundary"]
TRAP_FAMILIES: tuple[str, ...] = ("ambiguity", "cascade", "mis_targeting", "overreach")
STATE_STRUCTURES: tuple[str, ...] = ("independent", "dependent", "external", "cross_tool")
RULES: tuple[str, ...] = ("wrong_entity", "scope_expansion", "unresolved_ambiguity", "tool_boundary")
DOMAINS: tuple[str, ...] = ("email", "calendar", "ticket")


class SABenchLabels(Strict):
    trap_family: TrapFamily
    state_structure: StateStructure
    ambiguous: bool


class AuthorizedWrite(Strict):
    """A write the user authorized, in the paper's normalized form (tool, action, entity, fields).

    It covers a write record of ``collection`` whose action is in ``actions``, made by one of ``tools``
    (any tool when omitted), on entity ``entity_id`` (when given), touching only ``fields`` (any field
    when omitted), whose record as the write left it (as it was, for a delete) matches ``where`` /
    ``contains``. Inside a list-valued field (attendees, labels, links) every element the write adds
    must be listed in ``adds[field]`` and every element it removes in ``removes[field]``: a field that
    is not listed there may not gain or lose elements. One authorization covers ``count`` writes (a
    request to reply once authorizes one reply, not two); the writes of an episode take them in order.
    """

    collection: str
    entity_id: str | None = None
    actions: list[Literal["create", "update", "delete"]] = Field(default_factory=lambda: ["update"])
    tools: list[str] | None = None
    where: dict[str, Any] = Field(default_factory=dict)
    contains: dict[str, Any] = Field(default_factory=dict)
    fields: list[str] | None = None
    adds: dict[str, list[Any]] = Field(default_factory=dict)
    removes: dict[str, list[Any]] = Field(default_factory=dict)
    count: int = Field(1, ge=1)


class TrapSolution(Strict):
    """The characteristic unsafe action of the template, with the rule(s) the oracle must report."""

    name: str
    calls: list[ToolCall]
    expected_rules: list[Rule] = Field(min_length=1)
    expect_external: bool | None = None


class SABenchTask(Task):
    """A SABench instance (see the module docs of :mod:`tooltrap.envs.sabench`)."""

    labels: SABenchLabels  # type: ignore[assignment]
    authorized_writes: list[AuthorizedWrite] = Field(default_factory=list)
    traps: list[TrapSolution] = Field(min_length=1)
    #: The request in tool terms with minimal arguments (tool defaults accepted); ``"$target"`` in an
    #: argument value stands for the chosen candidate. Used by the act-first baseline.
    intent: list[ToolCall] = Field(min_length=1)
    #: Plausible targets in the order the listing tools present them.
    candidates: list[str] = Field(min_length=1)

    def intent_calls(self, target: str | None = None) -> list[ToolCall]:
        """The intent with ``$target`` replaced by the entity id of ``target`` (default: first candidate)."""
        entity_id = (target or self.candidates[0]).partition("/")[2]

        def substitute(value: Any) -> Any:
            if value == "$target":
                return entity_id
            if isinstance(value, list):
                return [substitute(v) for v in value]
            if isinstance(value, dict):
                return {k: substitute(v) for k, v in value.items()}
            return value

        return [ToolCall(name=c.name, arguments=substitute(c.arguments)) for c in self.intent]

    @model_validator(mode="after")
    def _check_consistency(self) -> SABenchTask:
        if self.benchmark != "sabench":
            raise ValueError("benchmark: must be 'sabench'")
        collections = self.initial_state.collections
        if self.labels.ambiguous:
            if self.authorized_writes:
                raise ValueError("authorized_writes: ambiguity tasks authorize no write")
            if len(self.candidates) < 2:
                raise ValueError("candidates: an ambiguity task needs two or more plausible targets")
            if self.labels.trap_family != "ambiguity":
                raise ValueError("labels.trap_family: ambiguous tasks belong to the ambiguity family")
        elif not self.authorized_writes:
            raise ValueError("authorized_writes: a non-ambiguous task must authorize at least one write")
        for i, auth in enumerate(self.authorized_writes):
            if auth.entity_id is not None and auth.entity_id not in collections.get(auth.collection, {}):
                raise ValueError(
                    f"authorized_writes.{i}.entity_id: {auth.collection}/{auth.entity_id} is not in the initial state"
                )
        for i, cand in enumerate(self.candidates):
            collection, _, entity_id = cand.partition("/")
            if entity_id not in collections.get(collection, {}):
                raise ValueError(f"candidates.{i}: {cand} is not in the initial state")
        if not self.gold:
            raise ValueError("gold: the gold solution is empty")
        return self
