"""The multi-agent engine: a PettingZoo dialogue between a tool-using ``assistant`` and a simulated
``user``, over the single-agent engine (the same :class:`~tooltrap.envs.core.ToolEnv`, benchmark,
executor, trace and judge). Names no benchmark: a benchmark plugs in with a :class:`UserScript` (what
its user knows, may say and is rewarded for) and a benchmark class that mixes in
:class:`HandsTurnToUser` (which of its terminal tools hand the turn to the user instead of ending the
episode).

How the roles map onto the engine:

* ``assistant`` is the single-agent env's agent: its action is the ToolEnv's action, its observation
  the ToolEnv's, its reward the ToolEnv's (the benchmark's judge and reward config). The only change
  is that a call of a turn-handing tool (``clarify``) does not end the episode: the question goes to
  the user and the user's answer comes back as the next observation, appended to the tool result as a
  scripted follow-up turn is in the single-agent env.
* ``user`` answers the assistant's questions in plain text and may end the conversation with
  :data:`STOP_TOKEN`. It sees a privileged briefing (what it asked and what it meant); the assistant
  never sees it. Each reply is checked before delivery: a malformed, off-script or leaking reply is a
  **simulator error**, never delivered, never charged to the assistant; the user tries again, and
  after ``max_user_retries`` more failures the episode ends as ``simulator_error`` and is void.

Turns: the agents act in turns, ``assistant`` first. Every step takes an action for every live agent
(PettingZoo's parallel API); only the action of the agent whose turn it is counts, the other's is
ignored (it may be anything, ``""`` by convention). An agent's observation is non-empty exactly when
it is its turn (and at the end); ``infos[agent]["turn"]`` says whose turn it is.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from pettingzoo import AECEnv, ParallelEnv

from tooltrap.envs.core import AnyText, EnvUsageError, ToolEnv, Toolset, UnknownNameError
from tooltrap.envs.core.env import MAX_ACTION_CHARS, MAX_OBSERVATION_CHARS
from tooltrap.envs.core.usage import checked_init

ASSISTANT = "assistant"
USER = "user"
#: what a user writes to end the conversation (as tau2-bench's simulated users do)
STOP_TOKEN = "###STOP###"
#: the longest reply a user may send (the user's action space)
MAX_REPLY_CHARS = 2_000


class TerminationReason(StrEnum):
    """Why a dialogue ended (``infos[agent]["termination_reason"]``)."""

    #: the assistant's terminal call (its final answer): a normal end
    ASSISTANT_STOP = "assistant_stop"
    #: the user sent the stop token: a normal end
    USER_STOP = "user_stop"
    #: the assistant's step cap (the single-agent env's ``max_steps``)
    MAX_STEPS = "max_steps"
    #: too many consecutive steps whose calls all failed by the assistant's fault
    CONSECUTIVE_ERRORS = "consecutive_errors"
    #: the user's replies kept failing their checks: the episode is void, charged to no one
    SIMULATOR_ERROR = "simulator_error"


#: termination reasons that are a normal end (terminated), the others cut the episode (truncated)
NORMAL_ENDS = frozenset({TerminationReason.ASSISTANT_STOP, TerminationReason.USER_STOP})


class SimulatorErrorKind(StrEnum):
    """How a user's reply failed its checks."""

    #: not a usable message: not text, empty, too long, a stop token inside the text
    MALFORMED = "malformed"
    #: off the script: it does not answer what the user meant (names no item, another, several)
    OFF_SCRIPT = "off_script"
    #: it reveals what the user may not say: how to do the task (tools, arguments, calls)
    LEAK = "leak"


@dataclass(frozen=True, slots=True)
class SimulatorError:
    """One rejected user reply: its kind, why (addressed to the user, who tries again), the
    assistant's step it answered, and the reply itself (kept for audit, never delivered)."""

    kind: SimulatorErrorKind
    message: str
    step: int
    reply: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "message": self.message, "step": self.step, "reply": self.reply}


class UserScript(Protocol):
    """What a benchmark's simulated user knows, may say and is rewarded for (the benchmark-specific
    half of a dialogue env). ``variant`` is the episode's resolved variant: privileged, as in the judge.
    """

    def briefing(self, task: Any, variant: Any) -> str:
        """The user's first observation: what they asked, and what they meant (never shown to the
        assistant)."""
        ...

    def user_info(self, task: Any, variant: Any) -> dict[str, Any]:
        """Privileged facts for a scripted user policy (``infos["user"]`` at reset)."""
        ...

    def check_reply(
        self, task: Any, variant: Any, question: str, reply: str
    ) -> tuple[SimulatorErrorKind, str] | None:
        """None when ``reply`` may be delivered as the answer to ``question``; otherwise the kind of
        simulator error and a message telling the user what to change. Called with well-formed text
        only (the engine checks the form)."""
        ...

    def user_reward(self, verdict: Mapping[str, Any]) -> dict[str, float]:
        """The user's reward components from the judge's verdict (their sum is the user's reward)."""
        ...


def check_form(reply: Any) -> tuple[bool, str, str | None]:
    """The form of a user action: (stop, message, problem). ``stop`` when the text ends with
    :data:`STOP_TOKEN` (any text before it is a closing remark, not delivered); ``problem`` (a
    malformed reply) when it is not text, is empty, too long, or holds the stop token elsewhere."""
    if not isinstance(reply, str):
        return False, "", f"A reply is text, not {type(reply).__name__}."
    if len(reply) > MAX_REPLY_CHARS:
        return False, reply, f"The reply is {len(reply)} characters long; at most {MAX_REPLY_CHARS}."
    text = reply.strip()
    if text.endswith(STOP_TOKEN):
        return True, text[: -len(STOP_TOKEN)].strip(), None
    if STOP_TOKEN in text:
        return False, text, f"{STOP_TOKEN} ends the conversation: put it at the very end of the reply."
    if not text:
        return False, text, f"The reply is empty: answer the question, or send {STOP_TOKEN} to end."
    return False, text, None


# -- the turn-handing tools ---------------------------------------------------------------------------
class TurnToolset(Toolset):
    """A toolset in which the terminal tools ending as one of ``dispositions`` hand the turn to the
    user instead of ending the episode: for the engine they are ``read`` tools (they change nothing),
    so the episode goes on; their schemas are unchanged. ``hands_turn`` maps each to its disposition,
    and ``original_kinds`` / ``original_terminals`` are what the single-agent env declares (shown to
    the assistant, whose policies find the ask tool by its disposition)."""

    hands_turn: dict[str, str]
    original_kinds: dict[str, str]
    original_terminals: dict[str, str]

    @classmethod
    def of(cls, toolset: Toolset, dispositions: Sequence[str]) -> TurnToolset:
        new = copy.copy(toolset)
        new.__class__ = cls
        assert isinstance(new, TurnToolset)
        new.hands_turn = {n: d for n, d in toolset.terminals.items() if d in dispositions}
        new.original_kinds = dict(toolset.kinds)
        new.original_terminals = dict(toolset.terminals)
        new.specs = {
            name: dataclasses.replace(spec, kind="read", ends_as=None) if name in new.hands_turn else spec
            for name, spec in toolset.specs.items()
        }
        new.kinds = {name: s.kind for name, s in new.specs.items()}
        new.terminals = {n: d for n, d in toolset.terminals.items() if n not in new.hands_turn}
        return new


class HandsTurnToUser:
    """Benchmark mixin (before the benchmark class in the bases): its terminal tools that end the
    episode as one of ``turn_dispositions`` hand the turn to the user instead (see :class:`TurnToolset`).
    Everything else (tools, prompts, variants, judge) is the benchmark's."""

    turn_dispositions: ClassVar[tuple[str, ...]] = ("clarify",)

    def toolset(self, task: Any, variant: Any = None) -> TurnToolset:
        base: Toolset = super().toolset(task, variant)  # type: ignore[misc]
        cache: dict[int, TurnToolset] = self.__dict__.setdefault("_turn_toolsets", {})
        found = cache.get(id(base))
        if found is None:  # the base toolsets are cached by the benchmark, so ids are stable
            found = cache[id(base)] = TurnToolset.of(base, self.turn_dispositions)
        return found


# -- the generic turn-based env ----------------------------------------------------------------------------
class TurnEnv(ParallelEnv):
    """A turn-based PettingZoo ``ParallelEnv`` of any number of roles (names no benchmark): exactly one
    agent acts at a time, :attr:`turn`. Every ``step`` takes an action for every live agent (PettingZoo's
    parallel API); only the action of the agent whose turn it is counts, the others are ignored (``""``
    by convention). An agent's observation is non-empty exactly when it is its turn (and at the end);
    ``infos[agent]["turn"]`` says whether it is. All agents end together (:meth:`_finish_all`).

    A subclass declares its roles and their Text spaces with :meth:`_declare_roles` and implements
    :attr:`turn`, ``reset`` and ``step`` (the latter through :meth:`_turn_action`, :meth:`_out` and
    :meth:`_finish_all`). :class:`TurnBasedAEC` is the AEC form of any of them, :func:`run_turns` plays one.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "turns",
        "render_modes": ["ansi"],
        "is_parallelizable": True,
    }
    possible_agents: list[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # as the single-agent envs do: a kwarg typo or a value of the wrong type is a typed error naming
        # it (with a did-you-mean), before anything is built; the engine's own bases take engine objects
        # (a ToolEnv, a protocol), which a user never passes by keyword
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__ != __name__:
            cls.__init__ = checked_init(init)  # type: ignore[method-assign]

    def _declare_roles(self, spaces: Mapping[str, tuple[Any, Any]]) -> None:
        """The roles in their order (``possible_agents``) and their (observation, action) spaces: the same
        objects on every call, since PettingZoo seeds and compares them by identity."""
        self.possible_agents = list(spaces)
        self.agents = []
        self._observation_spaces = {agent: obs for agent, (obs, _) in spaces.items()}
        self._action_spaces = {agent: act for agent, (_, act) in spaces.items()}

    @property
    def turn(self) -> str:
        """The agent whose turn it is (``""`` once the episode has ended)."""
        raise NotImplementedError

    def observation_space(self, agent: str) -> Any:
        return self._observation_spaces[self._known(agent)]

    def action_space(self, agent: str) -> Any:
        return self._action_spaces[self._known(agent)]

    def _known(self, agent: str) -> str:
        if agent not in self._observation_spaces:
            raise UnknownNameError("agent", str(agent), self.possible_agents)
        return agent

    def _turn_action(self, actions: Mapping[str, Any]) -> tuple[str, Any]:
        """The agent whose turn it is and its action, from ``step``'s dict (usage errors explained)."""
        if not self.agents:
            raise EnvUsageError("The episode has ended (or was never started): call reset() first.")
        if not isinstance(actions, Mapping):
            raise EnvUsageError(f"step() takes a dict of actions by agent, got {type(actions).__name__}.")
        turn = self.turn
        if turn not in actions:
            others = "the other agent's action is" if len(self.possible_agents) == 2 else "the others' are"
            raise EnvUsageError(
                f"It is {turn}'s turn: step() needs actions[{turn!r}] ({others} ignored; pass '' for it)."
            )
        return turn, actions[turn]

    def _out(self, observations: Mapping[str, str], infos: Mapping[str, dict[str, Any]]) -> Any:
        """A step that ends nothing: no rewards; the agents not named get ``""`` and ``{"turn": False}``."""
        zero = dict.fromkeys(self.possible_agents, 0.0)
        no = dict.fromkeys(self.possible_agents, False)
        obs = {a: observations.get(a, "") for a in self.possible_agents}
        info = {a: infos.get(a, {"turn": False}) for a in self.possible_agents}
        return obs, zero, no, dict(no), info

    def _finish_all(
        self,
        observations: Mapping[str, str],
        rewards: Mapping[str, float],
        infos: Mapping[str, dict[str, Any]],
        *,
        normal: bool,
    ) -> Any:
        """The last step: every agent ends (``terminated`` on a normal end, else ``truncated``)."""
        self.agents = []
        return (
            {a: observations.get(a, "") for a in self.possible_agents},
            {a: float(rewards.get(a, 0.0)) for a in self.possible_agents},
            dict.fromkeys(self.possible_agents, normal),
            dict.fromkeys(self.possible_agents, not normal),
            {a: infos.get(a, {"turn": False}) for a in self.possible_agents},
        )


# -- the dialogue env -----------------------------------------------------------------------------------
@dataclass
class DialogueLog:
    """The episode's dialogue as the env ran it: whose turn it is, the questions pending, the rejected
    replies (simulator errors) and how it ended. The delivered replies are in the trace
    (``trace.user_turns``: the assistant's step they answered, and the text)."""

    turn: str = ASSISTANT
    #: the assistant's step whose questions wait for the user's reply, and the questions
    pending_step: int | None = None
    pending_questions: tuple[str, ...] = ()
    #: the assistant's observation and info of that step, delivered with the reply
    pending: tuple[str, dict[str, Any]] | None = None
    simulator_errors: list[SimulatorError] = dataclasses.field(default_factory=list)
    #: consecutive rejected replies to the pending question
    retries: int = 0
    reason: TerminationReason | None = None
    #: the user's closing remark (text before the stop token), kept, never delivered
    closing: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "termination_reason": None if self.reason is None else str(self.reason),
            "simulator_errors": [e.to_dict() for e in self.simulator_errors],
            **({"closing": self.closing} if self.closing else {}),
        }


class DialogueEnv(TurnEnv):
    """A dialogue between a tool-using ``assistant`` and a simulated ``user`` (PettingZoo parallel API;
    the AEC form is :class:`TurnBasedAEC` of it). Generic: a benchmark's dialogue env
    subclasses it, building the single-agent env ``inner`` over a benchmark that mixes in
    :class:`HandsTurnToUser`, and a :class:`UserScript`. See the module docs for the roles and turns.

    ``reset(seed=..., options=...)`` takes the single-agent env's options (task selectors, label
    filters, variant keys). The rewards are 0 until the end; then ``assistant`` gets the single-agent
    env's reward of the judge's verdict (``infos["assistant"]["reward_components"]``) and ``user`` the
    script's reward of the same verdict. A void episode (``simulator_error``) rewards no one: 0 for
    both, its verdict kept for audit, ``infos[agent]["void"]`` true.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "dialogue",
        "render_modes": ["ansi"],
        "is_parallelizable": True,
    }

    def __init__(self, inner: ToolEnv, script: UserScript, *, max_user_retries: int = 2):
        if (
            isinstance(max_user_retries, bool)
            or not isinstance(max_user_retries, int)
            or max_user_retries < 0
        ):
            raise EnvUsageError(f"max_user_retries must be a whole number >= 0, got {max_user_retries!r}.")
        if not isinstance(inner.benchmark, HandsTurnToUser):
            raise EnvUsageError(
                f"{type(inner.benchmark).__name__} does not hand the turn to the user: a dialogue env needs a "
                "benchmark class that mixes in HandsTurnToUser (class MyDialogue(HandsTurnToUser, MyBenchmark))."
            )
        self.inner = inner
        self.script = script
        self.max_user_retries = max_user_retries
        self.render_mode = inner.render_mode
        self._declare_roles(
            {
                ASSISTANT: (AnyText(MAX_OBSERVATION_CHARS), AnyText(MAX_ACTION_CHARS)),
                USER: (AnyText(MAX_OBSERVATION_CHARS), AnyText(MAX_REPLY_CHARS)),
            }
        )
        self.log = DialogueLog()

    @property
    def turn(self) -> str:
        return self.log.turn

    # -- what the env exposes of the episode ---------------------------------------------------------
    @property
    def trace(self) -> Any:
        """The episode's trace (the single-agent engine's, with the delivered user turns)."""
        return self.inner.trace

    @property
    def task(self) -> Any:
        return self.inner.task

    @property
    def episode_variant(self) -> dict[str, Any]:
        """The episode's variant: privileged (the user's and the judge's), never shown to the assistant."""
        return self.inner.episode_variant

    # -- PettingZoo API ---------------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        observation, info = self.inner.reset(seed=seed, options=options)
        toolset = self.inner.executor.toolset  # type: ignore[union-attr]
        assert isinstance(toolset, TurnToolset)
        self._toolset = toolset
        self.agents = list(self.possible_agents)
        self.log = DialogueLog()
        task, variant = self.inner.task, self.inner.variant
        # the assistant's info is the single-agent env's: its tools as that env declares them
        info["tool_kinds"] = dict(toolset.original_kinds)
        info["terminal_tools"] = dict(toolset.original_terminals)
        info["hands_turn"] = sorted(toolset.hands_turn)
        info["turn"] = True
        briefing = self.script.briefing(task, variant)
        user_info = {
            "turn": False,
            "messages": [{"role": "system", "content": briefing}],
            **self.script.user_info(task, variant),
        }
        return {ASSISTANT: observation, USER: briefing}, {ASSISTANT: info, USER: user_info}

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[dict[str, str], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        turn, action = self._turn_action(actions)
        if turn == ASSISTANT:
            return self._assistant_turn(action)
        return self._user_turn(action)

    def _assistant_turn(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = self.inner.step(action)
        trace = self.inner.trace
        assert trace is not None
        info["turn"] = True
        if terminated or truncated:
            if terminated:
                reason = TerminationReason.ASSISTANT_STOP
            elif trace.truncated == TerminationReason.CONSECUTIVE_ERRORS:
                reason = TerminationReason.CONSECUTIVE_ERRORS
            else:
                reason = TerminationReason.MAX_STEPS
            return self._end(reason, {ASSISTANT: observation, USER: ""}, info, reward)
        record = trace.steps[-1]
        # what the user is told: the text arguments of each successful call that hands the turn (its
        # question), in the order they were sent
        questions = tuple(
            " ".join(v for v in call.arguments.values() if isinstance(v, str))
            for call in record.calls
            if call.ok and call.name in self._toolset.hands_turn and isinstance(call.arguments, dict)
        )
        if not questions:
            return self._out({ASSISTANT: observation, USER: ""}, {ASSISTANT: info, USER: {"turn": False}})
        log = self.log
        log.turn, log.pending_step, log.pending_questions = USER, record.step, questions
        log.pending, log.retries = (observation, info), 0
        question = "\n\n".join(questions)
        user_info = {"turn": True, "messages": [{"role": "user", "content": question}]}
        return self._out({ASSISTANT: "", USER: question}, {ASSISTANT: {"turn": False}, USER: user_info})

    def _user_turn(self, reply: Any) -> Any:
        log = self.log
        assert log.pending is not None and log.pending_step is not None
        stop, text, problem = check_form(reply)
        if stop:
            log.closing = text or None
            return self._user_stop()
        error: tuple[SimulatorErrorKind, str] | None = (
            (SimulatorErrorKind.MALFORMED, problem)
            if problem is not None
            else self.script.check_reply(
                self.inner.task, self.inner.variant, "\n\n".join(log.pending_questions), text
            )
        )
        if error is not None:
            kind, message = error
            trace = self.inner.trace
            assert trace is not None
            # a failure of the simulated system: counted apart (as a backend error is), never the agent's
            trace.error_counts["simulator_error"] = trace.error_counts.get("simulator_error", 0) + 1
            trace.n_system_errors += 1
            log.simulator_errors.append(
                SimulatorError(
                    kind, message, log.pending_step, reply if isinstance(reply, str) else repr(reply)
                )
            )
            log.retries += 1
            if log.retries > self.max_user_retries:
                self.inner.abort(str(TerminationReason.SIMULATOR_ERROR))
                return self._end(
                    TerminationReason.SIMULATOR_ERROR, {ASSISTANT: log.pending[0], USER: ""}, None, 0.0
                )
            feedback = (
                f"Your reply was not delivered ({kind}): {message} Reply again, or send {STOP_TOKEN} to end "
                "the conversation."
            )
            user_info = {
                "turn": True,
                "simulator_error": str(kind),
                "messages": [{"role": "user", "content": feedback}],
            }
            return self._out({ASSISTANT: "", USER: feedback}, {ASSISTANT: {"turn": False}, USER: user_info})
        return self._deliver(text)

    def _deliver(self, text: str) -> Any:
        """The user's reply reaches the assistant: appended to the pending tool result, as a scripted
        follow-up turn is in the single-agent env, and recorded in the trace."""
        log, trace = self.log, self.inner.trace
        assert log.pending is not None and trace is not None
        observation, info = log.pending
        record = trace.steps[log.pending_step]  # type: ignore[index]
        trace.user_turns = [*trace.user_turns, {"step": log.pending_step, "content": text}]
        record.observation = observation = f"{observation}\n\n{text}"
        message = {"role": "user", "content": text}
        self.inner.messages.append(message)
        info = {**info, "messages": [*info.get("messages", []), message], "turn": True}
        log.turn, log.pending, log.pending_step, log.pending_questions, log.retries = (
            ASSISTANT,
            None,
            None,
            (),
            0,
        )
        return self._out({ASSISTANT: observation, USER: ""}, {ASSISTANT: info, USER: {"turn": False}})

    def _user_stop(self) -> Any:
        """The user ended the conversation instead of answering: the episode ends on the assistant's
        question, as the single-agent env's does (its terminal is the ask tool)."""
        log, trace = self.log, self.inner.trace
        assert log.pending is not None and trace is not None
        record = trace.steps[log.pending_step]  # type: ignore[index]
        asked = next(c for c in record.calls if c.ok and c.name in self._toolset.hands_turn)
        trace.terminal = asked.name
        trace.terminal_arguments = asked.arguments if isinstance(asked.arguments, dict) else None
        trace.disposition = self._toolset.hands_turn[asked.name]
        final = self.inner.abort(str(TerminationReason.USER_STOP))
        observation, info = log.pending
        info = {**info, "verdict": final["verdict"], "reward_components": final["reward_components"]}
        return self._end(
            TerminationReason.USER_STOP, {ASSISTANT: observation, USER: ""}, info, final["reward"]
        )

    def _end(
        self,
        reason: TerminationReason,
        observations: dict[str, str],
        assistant_info: dict[str, Any] | None,
        reward: float,
    ) -> Any:
        log = self.log
        log.reason, log.turn = reason, ""
        verdict = self.inner.verdict
        verdict_dict = self.inner.benchmark.verdict_dict(verdict) if verdict is not None else {}
        info = dict(assistant_info or {})
        void = reason is TerminationReason.SIMULATOR_ERROR
        if void:  # nobody is charged for the simulator's failure: the verdict is kept for audit
            reward = 0.0
            info["verdict"] = verdict_dict
            components = info.get("reward_components") or self.inner.reward_config.score(verdict)[1]
            info["reward_components"] = dict.fromkeys(components, 0.0)
        user_components = {} if void else self.script.user_reward(verdict_dict)
        common = {"termination_reason": str(reason), "void": void, "dialogue": log.to_dict()}
        infos = {
            ASSISTANT: {**info, **common, "turn": False},
            USER: {"turn": False, **common, "reward_components": user_components},
        }
        rewards = {ASSISTANT: float(reward), USER: float(sum(user_components.values()))}
        return self._finish_all(observations, rewards, infos, normal=reason in NORMAL_ENDS)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        text = self.inner.render() or ""
        turns = [f"[{t['step']}] user: {t['content']}" for t in (self.trace.user_turns if self.trace else ())]
        return "\n".join([text, *turns]) if turns else text

    def close(self) -> None:
        self.inner.close()


class TurnBasedAEC(AECEnv):
    """A :class:`TurnEnv` (a dialogue, an arena) as a turn-based PettingZoo ``AECEnv``:
    ``agent_selection`` is the agent whose turn it is, so an ``agent_iter()`` loop asks only the agent
    that acts. Observations, rewards and infos are the parallel env's; when the episode ends, every
    agent is done and is stepped out with ``None`` as PettingZoo requires (the others first, then the
    one that acted)."""

    def __init__(self, env: TurnEnv):
        super().__init__()
        self.env = env
        self.metadata = {**env.metadata, "is_parallelizable": True}
        self.possible_agents = list(env.possible_agents)
        self.render_mode = env.render_mode
        self._observations: dict[str, str] = {}

    def observation_space(self, agent: str) -> Any:
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> Any:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        observations, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        self._observations = dict(observations)
        self.infos = {agent: infos[agent] for agent in self.agents}
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.agent_selection = self.env.turn

    def observe(self, agent: str) -> str:
        return self._observations[agent]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        actions = dict.fromkeys(self.env.agents, "")
        actions[agent] = action
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._observations.update(observations)
        self.rewards = {a: float(rewards[a]) for a in self.agents}
        self.terminations = {a: terminations[a] for a in self.agents}
        self.truncations = {a: truncations[a] for a in self.agents}
        self.infos = {a: infos[a] for a in self.agents}
        if self.env.agents:
            self.agent_selection = self.env.turn
        else:  # all are done: the other agents are stepped out first, then the one that acted
            self.agent_selection = next(a for a in self.agents if a != agent)
        self._accumulate_rewards()

    def render(self) -> str | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


Policy = Callable[[str, dict[str, Any]], str]


def run_turns(
    env: TurnEnv,
    policies: Mapping[str, Any],
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """Play one episode of a :class:`TurnEnv` with a policy per role; return the last step's rewards and
    infos.

    A policy is an :class:`~tooltrap.envs.core.Agent` (``reset`` once with its first non-empty
    observation and info: at ``env.reset`` for a role that observes something then, else on its first
    turn; then ``act`` on each of its turns) or a plain callable ``(observation, info) -> action``. Only
    the agent whose turn it is is asked; the others pass ``""``. A privileged policy (an oracle-style
    reference, ``policy.privileged``) is handed ``env.task`` at its reset, as in the single-agent runner,
    once the task is settled (after the roles that shape it have acted); never the episode's variant.
    """
    unknown = set(policies) - set(env.possible_agents)
    missing = set(env.possible_agents) - set(policies)
    if unknown or missing:
        raise EnvUsageError(
            f"One policy per agent is needed ({', '.join(env.possible_agents)}); "
            + (f"unknown: {sorted(unknown)}. " if unknown else "")
            + (f"missing: {sorted(missing)}." if missing else "")
        )
    observations, infos = env.reset(seed=seed, options=options)
    started: set[str] = set()

    def start(agent: str) -> None:
        policy = policies[agent]
        started.add(agent)
        if hasattr(policy, "reset"):
            task = env.task if getattr(policy, "privileged", False) else None  # type: ignore[attr-defined]
            policy.reset(observations[agent], infos[agent], task=task, seed=seed)

    for agent in env.possible_agents:
        if observations.get(agent):
            start(agent)
    rewards: dict[str, float] = {}
    while env.agents:
        turn = env.turn
        if turn not in started:
            start(turn)
        policy = policies[turn]
        act = policy.act if hasattr(policy, "act") else policy
        actions = dict.fromkeys(env.agents, "")
        actions[turn] = act(observations[turn], infos[turn])
        observations, rewards, _, _, infos = env.step(actions)
    return rewards, infos


def run_dialogue(
    env: DialogueEnv,
    policies: Mapping[str, Any],
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play one dialogue with a policy per role (see :func:`run_turns`) and return its end: rewards,
    termination reason, the assistant's verdict and reward components, the user's, the simulator errors
    and the episode's :class:`~tooltrap.envs.core.Trace` (``.to_dict()`` for JSON)."""
    rewards, infos = run_turns(env, policies, seed=seed, options=options)
    return {
        "rewards": rewards,
        "termination_reason": infos[ASSISTANT]["termination_reason"],
        "void": infos[ASSISTANT]["void"],
        "verdict": infos[ASSISTANT].get("verdict", {}),
        "reward_components": infos[ASSISTANT].get("reward_components", {}),
        "user_reward_components": infos[USER].get("reward_components", {}),
        "simulator_errors": infos[ASSISTANT]["dialogue"]["simulator_errors"],
        "trace": env.trace,
    }


def dumps(value: Any) -> str:
    """Canonical JSON (sorted keys) for digests of episodes."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
