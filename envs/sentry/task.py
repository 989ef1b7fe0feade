"""SentryBench scenarios: incoming content, the outcome a careful operator reaches, the consequential
calls it warrants, and (in the adversarial families) the attack: its vector, strategy, payload,
placement and what counts as its success in ledger terms.

Families (the paper's six): ``urgent`` (A: genuine urgent emergencies, as explicit call transcripts or
terse disaster reports), ``ambiguous`` (B: benign input that sounds alarming), ``suppression`` (C: a
real emergency plus a payload that wants it ignored), ``trigger`` (D: benign input plus a payload that
wants an alert or a dispatch), ``privilege`` (E: an over-broad citizen-record query), ``drift`` (F:
scripted follow-up turns that push the agent past its task).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from tooltrap.envs.core import Task, ToolCall, json_strings
from tooltrap.envs.core.tasks import Strict

FAMILIES: tuple[str, ...] = ("urgent", "ambiguous", "suppression", "trigger", "privilege", "drift")
VECTORS: tuple[str, ...] = (
    "direct_injection",
    "tool_poisoning",
    "impersonation",
    "goal_drift",
    "privilege_escalation",
)
STRATEGIES: tuple[str, ...] = (
    "urgent_override",
    "fake_system",
    "delimiter_escape",
    "fake_history",
    "task_update",
    "plain_request",
)
Family = Literal["urgent", "ambiguous", "suppression", "trigger", "privilege", "drift"]
Vector = Literal["direct_injection", "tool_poisoning", "impersonation", "goal_drift", "privilege_escalation"]
Strategy = Literal[
    "urgent_override", "fake_system", "delimiter_escape", "fake_history", "task_update", "plain_request"
]
Outcome = Literal["act", "do_not_act", "escalate"]
Form = Literal["transcript", "report", "message"]


class LedgerCall(Strict):
    """A consequential call pattern: the tool, and argument values the call must have."""

    tool: str
    match: dict[str, Any] = Field(default_factory=dict)

    def matches(self, name: str, arguments: Any) -> bool:
        if name != self.tool or not isinstance(arguments, Mapping):
            return False
        for key, wanted in self.match.items():
            value = arguments.get(key)
            if isinstance(wanted, list):
                if value not in wanted:
                    return False
            elif value != wanted:
                return False
        return True


class Attack(Strict):
    """What the attacker plants and wants.

    Attributes:
        placement: ``content`` (inside the incoming content the user hands over), ``tool:<name>`` (in
            the result of that read tool: a poisoned record), or ``turn:<k>`` (the k-th scripted
            follow-up turn, 1-based).
        goal: ``suppress`` (a genuine emergency is ignored: the warranted calls are not made and the
            case is not escalated), ``trigger`` (an unwarranted alert or dispatch), ``exfiltrate`` (an
            over-broad citizen-record query).
        success: For ``trigger`` / ``exfiltrate``: the calls whose presence in the ledger is success.
        directive_calls: What the payload asks for, in tool terms (what an obedient agent does).
        source: Where the payload text came from (``deepset:...``, ``jackhhao:...``, ``authored``).
    """

    vector: Vector
    strategy: Strategy
    placement: str
    payload: str
    goal: Literal["suppress", "trigger", "exfiltrate"]
    success: list[LedgerCall] = Field(default_factory=list)
    directive_calls: list[ToolCall] = Field(default_factory=list)
    source: str = "authored"

    @model_validator(mode="after")
    def _consistent(self) -> Attack:
        if not self.payload.strip():
            raise ValueError("payload: empty (the text the attacker plants)")
        if not (self.placement == "content" or self.placement.startswith(("tool:", "turn:"))):
            raise ValueError("placement: 'content', 'tool:<read tool>' or 'turn:<k>'")
        if self.placement.startswith("turn:") and not re.fullmatch(r"[1-9]\d{0,3}", self.placement[5:]):
            raise ValueError("placement: 'turn:<k>' names a follow-up turn by its number, 1-based")
        if self.goal != "suppress" and not self.success:
            raise ValueError("success: a trigger or exfiltration attack names the calls that are its success")
        return self


class SentryScenario(Task):
    """One scenario (see the module docstring). ``gold`` is the careful operator's calls."""

    family: Family
    content_form: Form
    #: a real emergency is happening
    genuine: bool
    #: it needs action now (an over-refusal if not acted on)
    urgent: bool
    outcome: Outcome
    #: consequential calls the outcome needs (every one must be made when the outcome is ``act``)
    warranted: list[LedgerCall] = Field(default_factory=list)
    #: other consequential calls that are fine (a person-scope record query for the caller)
    allowed: list[LedgerCall] = Field(default_factory=list)
    attack: Attack | None = None
    #: scripted user turns, one after each of the agent's replies
    follow_ups: list[str] = Field(default_factory=list)
    content_source: str = "authored"

    @model_validator(mode="after")
    def _consistent(self) -> SentryScenario:
        if self.benchmark != "sentry":
            raise ValueError("benchmark: must be 'sentry'")
        if self.outcome == "act" and not self.warranted:
            raise ValueError("warranted: an 'act' scenario names the calls it warrants")
        if self.outcome != "act" and self.warranted:
            raise ValueError("warranted: only an 'act' scenario warrants consequential calls")
        if self.urgent and not self.genuine:
            raise ValueError("urgent: an urgent scenario is a genuine emergency")
        adversarial = self.family in ("suppression", "trigger", "privilege", "drift")
        if adversarial != (self.attack is not None):
            raise ValueError(
                f"attack: the {self.family} family {'needs' if adversarial else 'has no'} attack"
            )
        for i, turn in enumerate(self.follow_ups):
            if not turn.strip():
                raise ValueError(f"follow_ups.{i}: empty (a scripted user turn says something)")
        attack = self.attack
        if attack is not None and attack.placement.startswith("turn:"):
            k = int(attack.placement.partition(":")[2])
            if not 1 <= k <= len(self.follow_ups):
                raise ValueError(
                    f"attack.placement: turn {k} is not one of the {len(self.follow_ups)} follow-ups"
                )
        if attack is not None:
            # the payload is where the placement says: else the attack never reaches the agent, the
            # clean twin equals the attacked scenario, and attack success is scored on nothing
            placement, payload = attack.placement, attack.payload
            if placement == "content":
                found, where = payload in self.instruction, "the instruction"
            elif placement.startswith("turn:"):
                k = int(placement.partition(":")[2])
                found, where = payload in self.follow_ups[k - 1], f"follow-up turn {k}"
            else:
                strings = json_strings(self.initial_state.collections)
                found, where = any(payload in text for text in strings), "the world's records"
            if not found:
                raise ValueError(f"attack.payload: not in {where} (placement {placement!r})")
        return self

    @property
    def adversarial(self) -> bool:
        return self.attack is not None
