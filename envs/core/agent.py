"""The Agent protocol, the generic pieces scripted policies are built from, and the baseline registry.

A benchmark's scripted baselines (``envs/<benchmark>/baselines.py``) import only this engine: they
subclass :class:`Agent` (or :class:`ScriptedAgent`, :class:`DecliningAgent`), find terminal tools by how
they end the episode (:func:`terminal_tool`), never by name, and register themselves by name for their
benchmark with :func:`register_baseline`. ``tooltrap.agents.make_agent`` resolves names through
:data:`BASELINES`, so a benchmark outside this library brings its baselines without editing ``agents/``.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .errors import EnvUsageError

if TYPE_CHECKING:
    from .benchmark import Benchmark

#: what a declining scripted policy asks (or gives as its reason), and how a scripted episode ends
DECLINE_TEXT = "Could you confirm exactly which item you mean?"
FINAL_ANSWER = "Done."


class Agent:
    """A policy that turns observations into actions (text holding JSON tool calls).

    ``reset`` is called once per episode with the first observation and info (chat messages and tool
    schemas). Privileged baselines (``privileged = True``) also receive the task itself: they are
    oracle-style references, not models. Only an agent with ``knows_variant = True`` (the gold
    reference) is also handed the episode's variant (``info["variant"]``: a world label, masked atoms,
    an injection); every other agent infers it from what it reads. ``act`` returns the next action text.
    """

    name: ClassVar[str] = "agent"
    privileged: ClassVar[bool] = False
    knows_variant: ClassVar[bool] = False
    #: Whether the runner may batch several episodes' generations (``prepare``/``generate``/``finish``).
    batchable: ClassVar[bool] = False
    #: Whether the agent is a model that answers in free text: only such an agent can play a prompted
    #: harness (ReAct), which shows the tools in prose and reads the reply as text. A scripted policy
    #: writes JSON calls from the tool schemas and is refused there.
    writes_text: ClassVar[bool] = False
    #: The raw output behind the last action (model text or message), recorded in the trace.
    last_raw: Any = None
    #: Where the last action's tool call was found in that output (``openai``, ``hermes``, ...).
    last_format: str | None = None
    #: Unencodable code points the agent replaced in that output before acting on it (a model server's
    #: reply read through :func:`~tooltrap.envs.core.text.make_safe`); recorded on the trace step.
    last_escaped: int = 0

    def clone(self) -> Agent:
        """A per-episode copy for concurrent evaluation (shares heavy resources such as models)."""
        return copy.deepcopy(self)

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        """Start an episode (optional: stateless policies need nothing)."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Return the next action."""
        raise NotImplementedError

    #: keys of :meth:`describe` that say how the agent is reached, not what it is (a resumed run may
    #: change them: the same model behind a corrected port)
    transport_keys: ClassVar[tuple[str, ...]] = ()

    def describe(self) -> dict[str, Any]:
        """Identity recorded with results (so a resumed run can check it is the same agent)."""
        return {"name": self.name}


# -- terminal tools, found by how they end the episode ------------------------------------------------
def terminal_tool(info: dict[str, Any], *dispositions: str) -> tuple[str, list[str]] | None:
    """The first terminal tool of an env (from its reset ``info``) that ends the episode with one of
    ``dispositions`` (in that order), with its required string parameters; None when there is none."""
    terminals: dict[str, str] = info.get("terminal_tools", {})
    schemas = {t["function"]["name"]: t["function"] for t in info.get("tools", [])}
    for wanted in dispositions:
        for name, ends_as in terminals.items():
            if ends_as == wanted:
                params = schemas.get(name, {}).get("parameters", {})
                props = params.get("properties", {})
                strings = [p for p in params.get("required", []) if props.get(p, {}).get("type") == "string"]
                return name, strings
    return None


def terminal_call(info: dict[str, Any], dispositions: tuple[str, ...], text: str) -> dict[str, Any] | None:
    """A call of the first terminal tool ending the episode with one of ``dispositions`` (in order),
    every required string argument set to ``text``; None when the env has no such tool."""
    found = terminal_tool(info, *dispositions)
    if found is None:
        return None
    name, strings = found
    return {"name": name, "arguments": dict.fromkeys(strings, text)}


def final_answer(info: dict[str, Any]) -> str:
    """The action that ends a scripted episode: the env's answer tool with :data:`FINAL_ANSWER`."""
    call = terminal_call(info, ("answer",), FINAL_ANSWER)
    if call is None:
        raise EnvUsageError("The env has no terminal tool that gives a final answer (ends_as='answer').")
    return json.dumps(call)


# -- scripted policies ----------------------------------------------------------------------------------
def _action(call: Any) -> str:
    return call.to_action() if hasattr(call, "to_action") else json.dumps(call)


def _is_preview(observation: str) -> bool:
    """Whether the last observation is a structured write preview awaiting commitment."""
    if '"preview"' not in observation:
        return False
    try:
        payload = json.loads(observation)
    except json.JSONDecodeError:
        return False
    result = payload.get("result") if isinstance(payload, dict) else None
    return isinstance(result, dict) and result.get("preview") is True


def _confirm_first_write(calls: list[Any], info: dict[str, Any]) -> list[Any]:
    """Keep the reads; replace the first write by a request for confirmation (and stop there)."""
    kinds: dict[str, str] = info.get("tool_kinds", {})
    out: list[Any] = []
    for call in calls:
        name = call.name if hasattr(call, "name") else call["name"]
        if kinds.get(name) in ("write", "commit"):
            question = f"Please confirm: I am about to call {_action(call)}. Shall I go ahead?"
            ask = terminal_call(info, ("clarify", "escalate"), question)
            if ask is None:
                raise EnvUsageError("A confirmation policy needs a terminal tool that asks the user.")
            out.append(ask)
            break
        out.append(call)
        if kinds.get(name) == "terminal":
            break
    return out


class ScriptedAgent(Agent):
    """Plays a fixed list of calls derived from the task (:meth:`script`), one per step, then the env's
    final answer.

    Under the mitigations: with a confirmation policy in ``info["policy"]`` the agent complies (it asks
    the user to confirm its first write with ``clarify`` instead of writing: the compliant-agent
    bracket); shown a structured write preview, it accepts it (sends the identical call again); a
    write declined by a confirmation gate is skipped.
    """

    privileged: ClassVar[bool] = True

    def __init__(self) -> None:
        self._queue: Iterator[str] = iter(())
        self._final = self._last = ""

    def script(self, task: Any, info: dict[str, Any]) -> list[Any]:
        """The calls to play (:class:`~tooltrap.envs.core.ToolCall` or ``{"name", "arguments"}``)."""
        raise NotImplementedError

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None:
            raise ValueError(f"The {self.name} baseline is privileged: it needs the task.")
        calls = list(self.script(task, info))
        if info.get("policy", {}).get("confirm_before_write"):
            calls = _confirm_first_write(calls, info)
        self._queue = iter([_action(c) for c in calls])
        self._final = self._last = final_answer(info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if _is_preview(observation):
            return self._last
        self._last = next(self._queue, self._final)
        return self._last


class DecliningAgent(Agent):
    """Ends the episode at once with the first terminal tool ending as one of :attr:`dispositions`
    (in order), every required text argument set to :attr:`text`, without reading anything."""

    dispositions: ClassVar[tuple[str, ...]] = ("clarify", "abstain", "escalate")
    text: ClassVar[str] = DECLINE_TEXT

    def __init__(self) -> None:
        self._action = ""

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        call = terminal_call(info, self.dispositions, self.text)
        if call is None:
            raise EnvUsageError(
                f"The env has no terminal tool that declines ({', '.join(self.dispositions)})."
            )
        self._action = json.dumps(call)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._action


# -- the baseline registry ------------------------------------------------------------------------------
#: builds an agent from keyword options (an :class:`Agent` subclass is one)
AgentFactory = Callable[..., Agent]
F = TypeVar("F", bound=AgentFactory)

#: benchmark name -> baseline name -> factory, filled as benchmarks' baseline modules are imported
BASELINES: dict[str, dict[str, AgentFactory]] = {}


def register_baseline(benchmark: str | type[Benchmark], name: str | None = None) -> Callable[[F], F]:
    """Register a scripted baseline of ``benchmark`` under ``name`` (default: the factory's ``name``),
    as a decorator::

        @register_baseline("toylibrary")
        class LendAnywayAgent(ScriptedAgent):
            name = "lend-anyway"

    ``register_baseline(MyBench, "x")(factory)`` registers any callable returning an :class:`Agent`.
    One name may be registered by several benchmarks (each its own policy under that name); within
    one benchmark a name is taken once (re-registering the same class, as a module reload does, is fine).

    Raises:
        EnvUsageError: The name is empty, or another factory already holds it for this benchmark.
    """
    bench = benchmark if isinstance(benchmark, str) else benchmark.name

    def register(factory: F) -> F:
        key = name or getattr(factory, "name", "")
        if not key or not bench:
            raise EnvUsageError(
                f"register_baseline needs a benchmark name and a baseline name (got {bench!r}, {key!r})."
            )
        table = BASELINES.setdefault(bench, {})
        known = table.get(key)
        if known is not None and _origin(known) != _origin(factory):
            raise EnvUsageError(
                f"Baseline {key!r} of {bench} is taken by {_origin(known)}; register {_origin(factory)} "
                "under another name."
            )
        table[key] = factory
        return factory

    return register


def _origin(factory: AgentFactory) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"


def benchmarks_with_baseline(name: str) -> list[str]:
    """The benchmarks that register a baseline called ``name``, sorted: registration order depends on
    which modules a process happened to import first, and messages naming them must not."""
    return sorted(bench for bench, table in BASELINES.items() if name in table)


_PACKAGED_LOADED = False


def load_packaged_baselines() -> None:
    """Import the ``baselines`` module of every benchmark folder shipped in ``tooltrap.envs`` (once), so
    that their names resolve before any of their envs is made. A benchmark defined elsewhere registers
    its baselines when its own module is imported."""
    global _PACKAGED_LOADED
    if _PACKAGED_LOADED:
        return
    package = importlib.import_module(__name__.rsplit(".", 2)[0])  # tooltrap.envs
    for root in package.__path__:
        for folder in sorted(Path(root).iterdir()):
            if (folder / "baselines.py").is_file():
                importlib.import_module(f"{package.__name__}.{folder.name}.baselines")
    _PACKAGED_LOADED = True
