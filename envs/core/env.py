"""The engine's gymnasium env, the executor shared with the oracle, and the benchmark plug-in base."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import gymnasium as gym
from pydantic import ValidationError

from .errors import (
    SYSTEM_ERROR_KINDS,
    EnvUsageError,
    ErrorKind,
    ToolCallError,
    UnknownOptionError,
    VariantError,
    did_you_mean,
)
from .reward import RewardConfig
from .spaces import AnyText
from .state import Change, State
from .tasks import Task, TaskCheckError, TaskSet, ToolCall
from .tools import Backend, Toolset
from .trace import CallRecord, StepRecord, Trace, WriteRecord
from .variants import Variant, parse_variant

#: Actions longer than this are rejected with a parse error before decoding (huge-input guard).
MAX_ACTION_CHARS = 32_768
MAX_OBSERVATION_CHARS = 1_000_000
#: Per step, tool results beyond this many characters are replaced by a note asking for less.
STEP_OBSERVATION_BUDGET = 200_000
# One encoder for every observation: json.dumps(..., ensure_ascii=False) builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


#: the disposition of an episode a commit ended (``Benchmark.commit_ends_episode``)
COMMIT_DISPOSITION = "commit"

#: reset options that pick the task (besides label filters); everything else is a variant key
TASK_SELECTORS: tuple[str, ...] = ("task_id", "task_index", "template_id", "templates")
#: every Benchmark subclass with a name, by name (filled as their modules are imported)
BENCHMARKS: dict[str, type[Benchmark]] = {}


class Benchmark:
    """A benchmark plugs into the engine by subclassing this and setting the class attributes.

    Adding a benchmark never changes the engine: backends declare tools, the task model declares the
    data, the variant model declares how one task can be played, ``judge`` is the oracle and
    ``reward_config_cls`` turns its verdict into a scalar. ``metrics`` (or a ``report`` entry point)
    tells ``tooltrap eval`` / ``tooltrap report`` what to compute.
    """

    name: ClassVar[str] = ""
    backends: ClassVar[tuple[type[Backend], ...]] = ()
    task_model: ClassVar[type[Task]] = Task
    reward_config_cls: ClassVar[type[RewardConfig]] = RewardConfig
    #: the episode variant (``reset(options=...)`` keys besides the task selectors)
    variant_model: ClassVar[type[Variant]] = Variant
    #: collection -> domain (system) it belongs to
    collection_domains: ClassVar[dict[str, str]] = {}
    #: collections whose records a tool creates as a side effect of another write (delivered notices):
    #: the caller never names them, so a reader of the call alone does not see them
    side_effect_collections: ClassVar[frozenset[str]] = frozenset()
    #: metric -> (outcome, denominator or None): rates over the verdict's boolean fields, for the
    #: generic summary and report (a benchmark with its own ``report`` may leave this empty)
    metrics: ClassVar[dict[str, tuple[str, str | None]]] = {}
    #: the verdict field episodes are clustered by in bootstrap intervals
    cluster_by: ClassVar[str] = "template_id"
    #: ``"module:attribute"`` of the benchmark's report (a ``tooltrap.wrappers.eval.report.BenchmarkReport``
    #: subclass instance); None: the generic rate report over ``metrics``
    report: ClassVar[str | None] = None
    #: evaluation protocols that choose their grid points adaptively (``tooltrap eval --protocol NAME``):
    #: name -> ``"module:attribute"`` of a planner class (``planner(seed=...).next_round(tasks, ledger)``)
    protocols: ClassVar[dict[str, str]] = {}
    max_steps: ClassVar[int] = 16
    #: whether a successful ``commit`` call ends the episode (its disposition is then ``"commit"``):
    #: a consequential action is the agent's decision, nothing after it can undo it
    commit_ends_episode: ClassVar[bool] = False
    max_consecutive_errors: ClassVar[int] = 5
    max_calls_per_step: ClassVar[int] = 8
    #: how to get a shorter prompt, named when a task's prompt exceeds the observation space
    shorter_prompt_hint: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            return
        known = BENCHMARKS.get(cls.name)
        if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
            raise EnvUsageError(
                f"Benchmark name {cls.name!r} is taken by {known.__module__}.{known.__qualname__}; "
                f"give {cls.__module__}.{cls.__qualname__} another name."
            )
        reserved = set(cls.variant_model.model_fields) & set(TASK_SELECTORS)
        if reserved:
            raise EnvUsageError(
                f"{cls.__qualname__}: variant keys {sorted(reserved)} are reserved for selecting tasks."
            )
        BENCHMARKS[cls.name] = cls

    def __init__(self) -> None:
        self._toolsets: dict[tuple[str, ...] | None, Toolset] = {}
        self._default_variant = self.variant_model()
        # reset is on the hot path of RL: skip the variant hooks of benchmarks that do not override them
        self.plain_variants = (
            type(self).resolve_variant is Benchmark.resolve_variant
            and type(self).initial_state is Benchmark.initial_state
        )

    @property
    def full_toolset(self) -> Toolset:
        """Every tool of the benchmark's backends (the toolset of a task that names no tools)."""
        if None not in self._toolsets:
            self._toolsets[None] = Toolset(self.backends)
        return self._toolsets[None]

    def tool_names(self, task: Task, variant: Variant | None = None) -> Sequence[str] | None:
        """The tools an episode of ``task`` played as ``variant`` exposes (None: every tool). Default:
        the task's ``tools``. Override when the variant adds or removes a tool (an audit tool that only
        one condition provides)."""
        return task.tools

    def toolset(self, task: Task, variant: Variant | None = None) -> Toolset:
        """The episode's toolset (cached per list of names)."""
        names = self.tool_names(task, variant)
        if names is None:
            return self.full_toolset
        key = tuple(names)
        found = self._toolsets.get(key)
        if found is None:
            found = self._toolsets[key] = Toolset(self.backends, include=key)
        return found

    def follow_up(self, task: Task, variant: Variant | None, trace: Trace) -> str | None:
        """The user's next turn after the agent's final answer (``trace.user_turns`` holds the turns so
        far), or None to end the episode there. Default: none (one request, one answer)."""
        return None

    def overbroad(self, name: str, arguments: Any) -> bool:
        """Whether a call reaches further than a task needs (an over-broad record query: a
        least-privilege check for gates). Default: never."""
        return False

    def episode_hooks(self, task: Task, variant: Variant) -> Sequence[Hook]:
        """Hooks that are part of the benchmark's own semantics for this episode (an observation mask),
        run before any installed or wrapper hook. Default: none."""
        return ()

    def lookup_calls(self, task: Task, argument: str, value: str) -> list[ToolCall]:
        """Read calls a careful agent would make to find ``value`` (the id passed as ``argument``, e.g.
        ``event_id``) when it is not on screen yet, in order of preference. Training demonstrations
        insert the first whose result shows it (see :func:`tooltrap.training.gold_rows`). Default:
        none (the benchmark's prompts show every id)."""
        return []

    def trap_note(self, task: Task) -> str | None:
        """One sentence naming the characteristic unsafe action the safe solution avoids (or the reason
        it asks or refuses), for demonstrations that say it (``gold_rows(..., trap_turn=True)``).
        Default: none."""
        return None

    # -- semantic checks of task data (run when tasks load; errors name the file, task and field) ----
    def known_collections(self, task: Task) -> set[str]:
        """The collections a task may refer to: the benchmark's, and those of its initial state."""
        return {*self.collection_domains, *self.side_effect_collections, *task.initial_state.collections}

    def check_task(self, task: Task) -> None:
        """Check that a validated task makes sense for this benchmark: its tools exist, its gold calls
        validate against the tool schemas, and its goal conditions refer to known collections and to
        entities that exist at reset. Raise :class:`~tooltrap.envs.core.tasks.TaskCheckError` naming the
        field. Benchmarks extend this (``super().check_task(task)`` first)."""
        names = {spec.name for backend in self.backends for spec in backend.tool_specs()}
        for i, name in enumerate(task.tools or []):
            if name not in names:
                raise TaskCheckError(f"tools.{i}", f"unknown tool {name!r}.{did_you_mean(name, names)}")
        self.check_calls(task, "gold", task.gold)
        for i, condition in enumerate(task.goal):
            for field, ref in condition.references():
                self.check_reference(task, f"goal.{i}.{field}", ref)

    def check_calls(self, task: Task, field: str, calls: Sequence[Any]) -> None:
        """Every call names a tool of the task's toolset and its arguments validate."""
        toolset = self.toolset(task)
        for i, call in enumerate(calls):
            if call.name not in toolset:
                raise TaskCheckError(
                    f"{field}.{i}.name",
                    f"{call.name!r} is not a tool of this task.{did_you_mean(call.name, toolset.specs)}",
                )
            try:
                toolset[call.name].validate(call.arguments)
            except ToolCallError as exc:
                raise TaskCheckError(f"{field}.{i}.arguments", exc.message) from None

    def check_reference(self, task: Task, field: str, ref: str) -> None:
        """``ref`` is ``"collection/id"`` (must exist at reset) or ``"collection/"`` (must be known)."""
        collection, _, entity_id = ref.partition("/")
        known = self.known_collections(task)
        if collection not in known:
            raise TaskCheckError(
                field, f"unknown collection {collection!r}.{did_you_mean(collection, known)}"
            )
        if entity_id and not task.entity_exists(ref):
            present = task.initial_state.collections.get(collection, {})
            raise TaskCheckError(
                field, f"{ref} is not in the initial state.{did_you_mean(entity_id, present)}"
            )

    def resolve_variant(self, task: Task, variant: Variant) -> Variant:
        """Fill task-dependent defaults and check the variant against the task (raise
        :class:`~tooltrap.envs.core.errors.VariantError` naming the key and the task)."""
        return variant

    def default_variant(self, task: Task) -> Variant:
        """The variant an episode gets when nothing is asked for."""
        return self.resolve_variant(task, self._default_variant)

    def initial_state(self, task: Task, variant: Variant) -> State:
        """The world at reset for ``task`` played as ``variant`` (the env and the oracle's replay both
        build it here). Override when the variant changes the world (a safe twin, a payload)."""
        return task.make_state()

    def prompt_messages(
        self, task: Task, state: State, toolset: Toolset, *, variant: Variant | None = None, **options: Any
    ) -> list[dict[str, Any]]:
        """Chat messages that open the episode (system + user)."""
        return [{"role": "user", "content": task.instruction}]

    def write_record(self, tool: str, change: Change, state: State) -> WriteRecord:
        """Normalize one entity change. Override to derive domain/external differently."""
        record = state.get(change.collection, change.entity_id) or change.before or {}
        return WriteRecord(
            tool=tool,
            domain=self.collection_domains.get(change.collection, change.collection),
            action=change.op,
            entity=change.entity,
            fields=change.fields,
            external=bool(record.get("external", False)),
        )

    def judge(self, task: Task, trace: Trace) -> Any:
        raise NotImplementedError

    def verdict_dict(self, verdict: Any) -> dict[str, Any]:
        return verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)


@dataclass(slots=True)
class Intercept:
    """Returned by a hook's ``before_call`` to answer a call without executing it (gates, previews).

    Attributes:
        result: The result (``ok``) or the error dict the agent sees.
        ok: Whether the call counts as successful.
        kind: Who intercepted (``gate``, ``preview``, ``trust_gate`` ...): counted in the trace.
        reason: Why, in a few words (kept in the call record).
        ends_as: End the episode with this disposition (``escalate``: handed to a human).
    """

    result: Any
    ok: bool = True
    kind: str = "intercept"
    reason: str = ""
    ends_as: str | None = None


@dataclass(slots=True)
class Rewrite:
    """Returned by a hook's ``before_call`` to execute another call than the agent sent (parameter
    injection). The agent's own call stays in the record (``sent_name`` / ``sent_arguments``)."""

    name: str
    arguments: Any
    kind: str = "rewrite"
    reason: str = ""


class Hook:
    """Extension point inside ``reset`` / ``step``: parameter injection, observation masking,
    adversarial content, gates, interceptors. A defense wrapper activates its hook for the calls that
    pass through it (``env.unwrapped.using_hooks``); ``env.unwrapped.add_hook`` installs one for good.
    All methods are optional no-ops."""

    def on_reset(self, env: ToolEnv, task: Task, variant: Variant) -> None:
        """Called after the state is built, before the first observation."""

    def before_call(self, env: ToolEnv, name: str, arguments: Any) -> tuple[str, Any] | Rewrite | Intercept:
        """Pass a parsed call on (return it), rewrite it (:class:`Rewrite`), or answer it
        (:class:`Intercept`)."""
        return name, arguments

    def after_call(self, env: ToolEnv, record: CallRecord) -> None:
        """Inspect or rewrite ``record.result`` / ``record.error`` before it is rendered (append what
        you remove to ``record.hidden``)."""

    def before_judge(self, env: ToolEnv, trace: Trace) -> None:
        """Called once the episode has ended, before the judge: the last chance to act on the final
        answer (``trace.override("abstain", kind=..., reason=...)``)."""


class Executor:
    """Runs validated tool calls against a state, atomically, producing :class:`CallRecord` s.

    Shared by the env and the oracle's replay so both see exactly the same semantics: the same task,
    the same variant, the same initial state.
    """

    __slots__ = ("benchmark", "task", "toolset", "state", "variant", "_bound", "_backends")

    def __init__(
        self, benchmark: Benchmark, task: Task, state: State | None = None, variant: Variant | None = None
    ):
        self.benchmark = benchmark
        self.task = task
        self.variant = variant if variant is not None else benchmark.default_variant(task)
        self.toolset = benchmark.toolset(task, self.variant)
        if state is None:
            state = (
                task.make_state() if benchmark.plain_variants else benchmark.initial_state(task, self.variant)
            )
        self.state = state
        self._bound: dict[str, Any] = {}
        self._backends: dict[type[Backend], Backend] = {}

    def bound_tool(self, name: str) -> Any:
        """The tool method bound to this executor's state (backends are built on first use)."""
        fn = self._bound.get(name)
        if fn is None:
            owner = self.toolset.owner[name]
            backend = self._backends.get(owner)
            if backend is None:
                backend = self._backends[owner] = owner(self.state, self.variant)
            fn = self._bound[name] = getattr(backend, self.toolset.specs[name].method)
        return fn

    def execute(self, name: Any, arguments: Any, *, step: int, index: int) -> CallRecord:
        if not isinstance(name, str):
            err = ToolCallError("Tool name must be a string.", kind=ErrorKind.PARSE_ERROR)
            return CallRecord(index, step, str(name), arguments, ok=False, error=err.to_dict())
        state = self.state
        mark = state.mark()
        try:
            spec = self.toolset[name]
            kwargs = spec.validate(arguments)
            result = self.bound_tool(name)(**kwargs)
        except ToolCallError as err:
            state.rollback(mark)
            kind = self.toolset.specs[name].kind if name in self.toolset.specs else None
            return CallRecord(index, step, name, arguments, ok=False, kind=kind, error=err.to_dict())
        except Exception as exc:  # a backend bug must not corrupt the episode, nor be charged to the agent
            state.rollback(mark)
            err = ToolCallError(
                f"The {name} tool failed inside the simulated system ({type(exc).__name__}: {exc}).",
                kind=ErrorKind.BACKEND_ERROR,
                hint="This is a fault of the system, not of your call: nothing was changed.",
            )
            kind = self.toolset.specs[name].kind if name in self.toolset.specs else None
            return CallRecord(index, step, name, arguments, ok=False, kind=kind, error=err.to_dict())
        record = CallRecord(index, step, name, arguments, ok=True, kind=spec.kind, result=result)
        if len(state.log) > mark[0]:
            record.writes, record.values = self._writes(name, state.log[mark[0] :])
        return record

    def _writes(
        self, tool: str, changes: list[Change]
    ) -> tuple[list[WriteRecord], list[tuple[dict[str, Any] | None, dict[str, Any] | None]]]:
        """One record per affected entity (fields merged across the call's changes), and for each the
        entity before and after the call (records are snapshots: the state never mutates one)."""
        merged: dict[tuple[str, str], Change] = {}
        for change in changes:
            key = (change.collection, change.entity_id)
            prev = merged.get(key)
            if prev is None:
                merged[key] = change
            else:
                fields = tuple(sorted(set(prev.fields) | set(change.fields)))
                op = prev.op if prev.op == "create" else change.op
                merged[key] = Change(change.collection, change.entity_id, op, fields, prev.before)
        state, describe = self.state, self.benchmark.write_record
        out = []
        values = []
        for change in merged.values():
            after = state.get(change.collection, change.entity_id)
            if change.op == "create" and after is None:
                continue  # created and deleted within one call: no net effect
            out.append(describe(tool, change, state))
            values.append((change.before, after))
        return out, values


def _reward_config(cls: type[RewardConfig], given: RewardConfig | Mapping[str, Any] | None) -> RewardConfig:
    """The env's reward config from a config or a dict of weights (typed errors with did-you-mean)."""
    if given is None:
        return cls()
    if isinstance(given, cls):
        return given
    if not isinstance(given, Mapping):
        raise EnvUsageError(
            f"reward_config takes a {cls.__name__} or a dict of weights, not {type(given).__name__}."
        )
    try:
        return cls(**given)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "extra_forbidden":
            raise UnknownOptionError(key, cls.model_fields, what="reward weight") from None
        raise EnvUsageError(f"reward_config.{key}: {err['msg']}") from None


def abort_episode(env: gym.Env, reason: str) -> dict[str, Any]:
    """End ``env``'s episode from outside (provider error, trainer stop) through its wrapper stack, so
    that the defenses' before-judge hooks still run. Returns the final info (verdict, reward,
    components)."""
    return env.get_wrapper_attr("abort")(reason)


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nesting too deep"
    return "a number is too long" if "digits" in str(exc) else str(exc)


def _error_json(error: dict[str, str]) -> str:
    return _encode({"ok": False, "error": error})


SchemaDialect = Literal["full", "transformers"]


class ToolEnv(gym.Env[str, str]):
    """A tool-using agent acting on a simulated system through JSON tool calls.

    ## Description
    Each episode is one task played as one variant: an instruction, a simulated state and a set of
    tools. The agent acts by emitting tool calls; the episode ends at the first terminal tool call
    (a final answer, a clarifying question, an abstention or an escalation, as the tool declares), or is
    truncated by the step cap or too many consecutive errors. The benchmark's oracle then judges the
    trace and the reward is computed from its verdict.

    ## Action Space
    ``AnyText``: a string holding one JSON tool call ``{"name": ..., "arguments": {...}}`` or a JSON
    list of them (at most ``max_calls_per_step``). ``arguments`` may also be a JSON-encoded string.

    ## Observation Space
    ``AnyText``: after ``reset`` the rendered prompt; after ``step`` the JSON of the tool result(s):
    ``{"tool": name, "ok": true, "result": ...}`` or ``{"tool": name, "ok": false, "error": {"type":
    ..., "message": ..., "hint": ...}}`` (a list when the action was a list). Structured chat messages
    (OpenAI format) are in ``info["messages"]`` (the prompt at reset, this step's new messages after);
    at reset ``info`` also has the tool schemas (``tools``), each tool's kind (``tool_kinds``: read /
    write / commit / terminal), the terminal tools with how they end the episode (``terminal_tools``)
    and the resolved ``variant``.

    ## Rewards
    0 on every non-final step; on the final step (terminated or truncated) the benchmark's reward of the
    oracle verdict, with ``info["reward_components"]`` and ``info["verdict"]``.

    ## Episode End
    Terminated by a terminal tool call (or an intercept that ends the episode); truncated after
    ``max_steps`` steps or ``max_consecutive_errors`` consecutive steps whose calls all failed by the
    agent's fault (a ``backend_error`` is the system's, not the agent's).

    ## Arguments
    ``benchmark`` (a :class:`Benchmark`), ``tasks`` (the tasks to draw from), ``reward_config``,
    ``max_steps``, ``variant`` (default variant values, a mapping or the benchmark's variant model),
    ``tool_schemas`` (``full``: every declared constraint; ``transformers``: the schemas exactly as
    TRL renders the ``environment_factory`` methods, without bounds and defaults), ``render_mode``
    (``"ansi"``). ``reset(options=...)`` accepts ``task_id`` or ``task_index``; otherwise a task is drawn
    with the env's seeded RNG among the tasks matching ``template_id``/``templates`` and label filters
    (such as ``trap_family``); the benchmark's variant keys choose the variant. An unknown key raises
    :class:`~tooltrap.envs.core.errors.UnknownOptionError` listing the valid ones.

    ## Version History
    * v0: initial release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

    def __init__(
        self,
        benchmark: Benchmark,
        tasks: Sequence[Task],
        *,
        reward_config: RewardConfig | dict[str, Any] | None = None,
        max_steps: int | None = None,
        variant: Variant | Mapping[str, Any] | None = None,
        tool_schemas: SchemaDialect = "full",
        render_mode: str | None = None,
    ):
        if not len(tasks):
            raise EnvUsageError("No tasks to run: the task selection is empty. Check your filters.")
        if render_mode not in (None, "ansi"):
            raise EnvUsageError(f"Unsupported render_mode {render_mode!r}; use 'ansi' or None.")
        if tool_schemas not in ("full", "transformers"):
            raise UnknownOptionError(str(tool_schemas), ("full", "transformers"))
        self.benchmark = benchmark
        self.tasks: TaskSet[Any] = tasks if isinstance(tasks, TaskSet) else TaskSet(tasks)
        self.reward_config = _reward_config(benchmark.reward_config_cls, reward_config)
        if max_steps is not None and (
            isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1
        ):
            raise EnvUsageError(f"max_steps must be a whole number >= 1, got {max_steps!r}.")
        self.max_steps = max_steps if max_steps is not None else benchmark.max_steps
        self.render_mode = render_mode
        self.tool_schema_dialect = tool_schemas
        self.action_space = AnyText(MAX_ACTION_CHARS)
        self.observation_space = AnyText(MAX_OBSERVATION_CHARS)
        self.hooks: list[Hook] = []
        self._scoped_hooks: list[Hook] = []
        #: the benchmark's own hooks for the current episode (``Benchmark.episode_hooks``)
        self._episode_hooks: Sequence[Hook] = ()
        #: benchmark-specific prompt options (e.g. SABench's ``state_format``)
        self.prompt_options: dict[str, Any] = {}
        self._label_keys = frozenset(k for t in self.tasks for k in t.label_dict())
        self._variant_keys = frozenset(benchmark.variant_model.model_fields)
        if isinstance(variant, Variant):
            self.default_variant = variant
        else:
            self.default_variant = parse_variant(
                benchmark.variant_model, variant or {}, valid_keys=self._valid_keys()
            )
        self._pools: dict[str, TaskSet[Any]] = {}
        self._variant_shown: tuple[Variant | None, dict[str, Any]] = (None, {})
        self.task: Any = None
        self.variant: Variant | None = None
        self.state: State | None = None
        self.trace: Trace | None = None
        self.executor: Executor | None = None
        self.messages: list[dict[str, Any]] = []
        self.verdict: Any = None
        self._done = True
        self._n_calls = 0
        self._consecutive_errors = 0

    # -- extension -----------------------------------------------------------------------------------
    def add_hook(self, hook: Hook) -> None:
        """Install ``hook`` for every later episode (defense wrappers use :meth:`using_hooks`)."""
        self.hooks.append(hook)

    @contextmanager
    def using_hooks(self, *hooks: Hook) -> Iterator[None]:
        """Activate ``hooks`` for the duration of the block (a wrapper's ``reset`` / ``step``), after the
        installed ones and after those of outer wrappers."""
        n = len(self._scoped_hooks)
        self._scoped_hooks.extend(hooks)
        try:
            yield
        finally:
            del self._scoped_hooks[n:]

    @property
    def active_hooks(self) -> list[Hook]:
        hooks = self.hooks + self._scoped_hooks if self._scoped_hooks else self.hooks
        return [*self._episode_hooks, *hooks] if self._episode_hooks else hooks

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        if self.task is None:
            raise EnvUsageError("Call reset() first: the tools depend on the task.")
        return self._schemas(self.benchmark.toolset(self.task, self.variant))

    def _schemas(self, toolset: Toolset) -> list[dict[str, Any]]:
        return toolset.schemas if self.tool_schema_dialect == "full" else toolset.transformers_schemas

    def _valid_keys(self) -> tuple[str, ...]:
        return (*TASK_SELECTORS, *sorted(self._label_keys))

    # -- gymnasium API -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if options is not None and type(options) is not dict and not isinstance(options, Mapping):
            raise EnvUsageError(f"reset(options=...) takes a dict, got {type(options).__name__}.")
        if options is not None and len(options) == 1 and "task_id" in options:  # the common case, fast
            task, requested = self.tasks.get(options["task_id"]), None
        else:
            task, requested = self._select(options or {})
        benchmark = self.benchmark
        if requested or not benchmark.plain_variants:
            variant = self._resolve_variant(task, requested or {})
        else:
            variant = self.default_variant
        self.task = task
        self.variant = variant
        executor = self.executor = Executor(benchmark, task, variant=variant)
        state = self.state = executor.state
        self.trace = Trace(task_id=task.id, variant=variant, seed=seed)
        self.verdict = None
        self._done = False
        self._n_calls = 0
        self._consecutive_errors = 0
        self._episode_hooks = benchmark.episode_hooks(task, variant)
        for hook in self.active_hooks:
            hook.on_reset(self, task, variant)
        toolset = executor.toolset
        messages = self.messages = benchmark.prompt_messages(
            task, state, toolset, variant=variant, **self.prompt_options
        )
        observation = "\n\n".join([m["content"] for m in messages])
        if len(observation) > MAX_OBSERVATION_CHARS:
            raise EnvUsageError(
                f"The prompt of task {task.id} is {len(observation):,} characters, over the observation "
                f"space's {MAX_OBSERVATION_CHARS:,}. {benchmark.shorter_prompt_hint}".strip()
            )
        shown = self._variant_shown
        if variant is not shown[0]:
            shown = self._variant_shown = (variant, variant.to_dict())
        info = {
            "task_id": task.id,
            "variant": dict(shown[1]),
            "messages": list(messages),
            "tools": list(self._schemas(toolset)),
            "tool_kinds": dict(toolset.kinds),
            "terminal_tools": dict(toolset.terminals),
        }
        return observation, info

    def _select(self, options: Mapping[str, Any]) -> tuple[Task, dict[str, Any]]:
        """The task the reset options pick, and the variant values they ask for."""
        selectors: dict[str, Any] = {}
        requested: dict[str, Any] = {}
        for key, value in options.items():
            if key in self._variant_keys:
                requested[key] = value
            elif key in TASK_SELECTORS or key in self._label_keys:
                if value is not None:
                    selectors[key] = value
            else:
                raise UnknownOptionError(key, (*self._valid_keys(), *self._variant_keys))
        if "task_id" in selectors:
            task = self.tasks.get(selectors["task_id"])
        elif "task_index" in selectors:
            index = selectors["task_index"]
            if isinstance(index, bool) or not isinstance(index, int):
                raise EnvUsageError(f"task_index takes a whole number, got {index!r}; or pass task_id.")
            task = self.tasks[index % len(self.tasks)]
        else:
            pool = self._pool(selectors)
            task = pool[int(self.np_random.integers(len(pool)))]
        return task, requested

    def _resolve_variant(self, task: Task, requested: dict[str, Any]) -> Variant:
        base = self.default_variant
        variant = (
            parse_variant(self.benchmark.variant_model, requested, base=base, valid_keys=self._valid_keys())
            if requested
            else base
        )
        try:
            return self.benchmark.resolve_variant(task, variant)
        except VariantError as err:
            if err.task_id is None:
                raise VariantError(err.message, key=err.key, task_id=task.id) from None
            raise

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.trace is None or self.executor is None:
            raise EnvUsageError("Cannot call step() before reset().")
        if self._done:
            raise EnvUsageError("The episode has ended; call reset() to start a new one.")
        trace = self.trace
        step_no = len(trace.steps)
        record = StepRecord(
            step=step_no, action=action if isinstance(action, str) else repr(action), calls=[]
        )
        trace.steps.append(record)
        calls, as_list, error = self._parse(action)
        results: list[dict[str, Any]] = []
        terminal: CallRecord | None = None
        ends_as: str | None = None
        if error is not None:
            record.error = error
            trace.count_error(error["type"])
            observation = _error_json(error)
        else:
            terminals = self.executor.toolset.terminals
            for name, arguments in calls:
                if terminal is not None:  # the episode ended earlier in this action: record, never run
                    call = self._not_executed(name, arguments, step_no, terminal)
                    record.calls.append(call)
                    results.append({"tool": call.name, "ok": False, "error": call.error})
                    continue
                call = self._run_call(name, arguments, step_no)
                record.calls.append(call)
                shown = call.sent_name if call.rewrites else call.name
                if call.ok:
                    results.append({"tool": shown, "ok": True, "result": call.result})
                else:
                    trace.count_error(call.error["type"])  # type: ignore[index]
                    results.append({"tool": shown, "ok": False, "error": call.error})
                if call.intercept is not None:
                    trace.count_intercept(call.intercept["kind"])
                    ends_as = call.intercept.get("ends_as")
                    if ends_as:
                        terminal = call
                        continue
                if call.ok and call.kind == "terminal":
                    terminal, ends_as = call, terminals.get(call.name, "answer")
                elif call.ok and call.kind == "commit" and self.benchmark.commit_ends_episode:
                    terminal, ends_as = call, COMMIT_DISPOSITION
            observation = _encode(results if as_list else results[0])
            if len(observation) > STEP_OBSERVATION_BUDGET:
                observation = self._fit(record.calls, results, as_list)
        record.observation = observation
        all_failed = error is not None or all(
            not c.ok and c.error["type"] not in SYSTEM_ERROR_KINDS  # type: ignore[index]
            for c in record.calls
        )
        self._consecutive_errors = self._consecutive_errors + 1 if all_failed else 0

        follow_up: str | None = None
        if terminal is not None and ends_as == "answer":
            # a scripted user may answer the agent's reply (multi-turn conversations): not the end yet
            follow_up = self.benchmark.follow_up(self.task, self.variant, trace)
            if follow_up is not None:
                terminal = None
                trace.user_turns = [*trace.user_turns, {"step": step_no, "content": follow_up}]
                record.observation = observation = f"{observation}\n\n{follow_up}"
        terminated = terminal is not None
        truncated = False
        if terminal is not None:
            trace.terminal = terminal.name
            trace.terminal_arguments = terminal.arguments if isinstance(terminal.arguments, dict) else None
            trace.disposition = ends_as
        elif self._consecutive_errors >= self.benchmark.max_consecutive_errors:
            truncated, trace.truncated = True, "consecutive_errors"
        elif len(trace.steps) >= self.max_steps:
            truncated, trace.truncated = True, "max_steps"

        new_messages = self._step_messages(record, results, as_list)
        if follow_up is not None:
            if new_messages and new_messages[-1]["role"] == "user":  # an action-level error message
                new_messages[-1] = {**new_messages[-1], "content": record.observation}
            else:
                new_messages.append({"role": "user", "content": follow_up})
        self.messages.extend(new_messages)
        info: dict[str, Any] = {"step": step_no, "messages": new_messages, "n_errors": trace.n_errors}
        reward = 0.0
        if terminated or truncated:
            final = self._finish()
            reward = final["reward"]
            info["verdict"] = final["verdict"]
            info["reward_components"] = final["reward_components"]
        return observation, float(reward), terminated, truncated, info

    def _fit(self, calls: list[CallRecord], results: list[dict[str, Any]], as_list: bool) -> str:
        """Replace the largest results by a note until the step's observation fits its budget (the agent
        sees, and the trace keeps, the note: ``hidden`` records ``$`` for the call)."""
        sizes = sorted(((len(_encode(r)), i) for i, r in enumerate(results)), reverse=True)
        total = sum(size for size, _ in sizes)
        for size, i in sizes:
            if total <= STEP_OBSERVATION_BUDGET:
                break
            call = calls[i]
            note = {
                "omitted_chars": size,
                "hint": "The result is too large to show: ask for less (a narrower query, a smaller "
                "limit, one item at a time).",
            }
            results[i] = {"tool": results[i]["tool"], "ok": results[i]["ok"], "truncated": note}
            if call.ok:
                call.result = {"truncated": note}
                call.hidden = [*call.hidden, "$"]
            total -= size - len(_encode(results[i]))
        return _encode(results if as_list else results[0])

    def _finish(self) -> dict[str, Any]:
        """End the episode: the before-judge hooks, then the judge and the reward."""
        assert self.trace is not None
        self._done = True
        for hook in self.active_hooks:
            hook.before_judge(self, self.trace)
        self.verdict = self.benchmark.judge(self.task, self.trace)
        reward, components = self.reward_config.score(self.verdict)
        return {
            "verdict": self.benchmark.verdict_dict(self.verdict),
            "reward": float(reward),
            "reward_components": components,
        }

    def abort(self, reason: str) -> dict[str, Any]:
        """End the episode from outside (a provider error, a content filter, a trainer that stopped
        generating): the trace is truncated with ``reason`` and judged as it stands. Returns the final
        info (verdict, reward, components). Through wrappers, call :func:`abort_episode` so that the
        defenses' hooks take part."""
        if self.trace is None:
            raise EnvUsageError("Cannot abort before reset().")
        if self._done:
            raise EnvUsageError("The episode has already ended.")
        self.trace.truncated = reason
        return self._finish()

    @property
    def done(self) -> bool:
        """Whether the current episode has ended."""
        return self._done

    # -- internals -----------------------------------------------------------------------------------
    def _pool(self, filters: dict[str, Any]) -> TaskSet[Any]:
        """Tasks matching reset-option filters (``template_id`` or ``templates``, or any label)."""
        if not filters:
            return self.tasks
        key = repr(sorted(filters.items()))
        pool = self._pools.get(key)
        if pool is None:
            filters = dict(filters)
            templates = filters.pop("templates", None) or filters.pop("template_id", None)
            if isinstance(templates, str):
                templates = [templates]
            pool = self.tasks.select(templates=templates, **filters)
            if not len(pool):
                raise EnvUsageError(f"No task matches the reset options {filters}.")
            self._pools[key] = pool
        return pool

    def _parse(self, action: Any) -> tuple[list[tuple[Any, Any]], bool, dict[str, str] | None]:
        """Decode the action into (name, arguments) pairs; an action-level error otherwise."""

        def fail(message: str, kind: ErrorKind = ErrorKind.PARSE_ERROR, hint: str | None = None):
            return [], False, ToolCallError(message, kind=kind, hint=hint).to_dict()

        hint = 'Send one JSON object {"name": "<tool>", "arguments": {...}} or a JSON list of them.'
        if not isinstance(action, str):
            return fail(f"Action must be a string, got {type(action).__name__}.", hint=hint)
        if len(action) > MAX_ACTION_CHARS:
            return fail(
                f"Action is {len(action)} characters long; the limit is {MAX_ACTION_CHARS}.", hint=hint
            )
        try:
            decoded = json.loads(action)
        except (ValueError, RecursionError) as exc:  # ValueError: also integers past Python's digit limit
            return fail(f"Action is not valid JSON: {_json_problem(exc)}.", hint=hint)
        as_list = isinstance(decoded, list)
        items = decoded if as_list else [decoded]
        if not items:
            return fail("Empty list of tool calls.", hint=hint)
        if len(items) > self.benchmark.max_calls_per_step:
            return fail(
                f"{len(items)} calls in one step; at most {self.benchmark.max_calls_per_step} are allowed.",
                kind=ErrorKind.TOO_MANY_CALLS,
            )
        calls: list[tuple[Any, Any]] = []
        for item in items:
            if not isinstance(item, dict) or "name" not in item:
                return fail("Each tool call must be an object with a 'name' and 'arguments'.", hint=hint)
            extra = set(item) - {"name", "arguments"}
            if extra:
                return fail(f"Unexpected keys in tool call: {sorted(extra)}.", hint=hint)
            arguments = item.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except (ValueError, RecursionError) as exc:
                    return fail(
                        f"'arguments' is a string but not valid JSON: {_json_problem(exc)}.", hint=hint
                    )
            calls.append((item["name"], arguments))
        return calls, as_list, None

    def _not_executed(self, name: Any, arguments: Any, step_no: int, ended_by: CallRecord) -> CallRecord:
        """The record of a call sent after the call that ended the episode (same action): not run."""
        index = self._n_calls
        self._n_calls += 1
        specs = self.executor.toolset.specs if self.executor is not None else {}
        kind = specs[name].kind if isinstance(name, str) and name in specs else None
        error = {
            "type": str(ErrorKind.NOT_EXECUTED),
            "message": f"Not executed: {ended_by.name} ended the episode earlier in the same action.",
        }
        return CallRecord(index, step_no, str(name), arguments, ok=False, kind=kind, error=error)

    def _run_call(self, name: Any, arguments: Any, step_no: int) -> CallRecord:
        assert self.executor is not None
        index = self._n_calls
        self._n_calls += 1
        hooks = self.active_hooks
        if not hooks:
            return self.executor.execute(name, arguments, step=step_no, index=index)
        sent_name, sent_arguments = name, arguments
        rewrites: list[dict[str, str]] = []
        call: CallRecord | None = None
        for hook in hooks:
            outcome = hook.before_call(self, name, arguments)
            if isinstance(outcome, Intercept):
                specs = self.executor.toolset.specs
                kind = specs[name].kind if isinstance(name, str) and name in specs else None
                call = CallRecord(index, step_no, str(name), arguments, ok=outcome.ok, kind=kind)
                call.intercept = {"kind": outcome.kind, "reason": outcome.reason}
                if outcome.ends_as:
                    call.intercept["ends_as"] = outcome.ends_as
                if outcome.ok:
                    call.result = outcome.result
                else:
                    call.error = outcome.result
                break
            if isinstance(outcome, Rewrite):
                name, arguments = outcome.name, outcome.arguments
                rewrites.append({"kind": outcome.kind, "reason": outcome.reason})
            else:
                new_name, new_arguments = outcome
                if new_name != name or (new_arguments is not arguments and new_arguments != arguments):
                    rewrites.append({"kind": type(hook).__name__, "reason": ""})
                name, arguments = new_name, new_arguments
        if call is None:
            call = self.executor.execute(name, arguments, step=step_no, index=index)
        if rewrites:
            call.sent_name, call.sent_arguments, call.rewrites = str(sent_name), sent_arguments, rewrites
        for hook in hooks:
            hook.after_call(self, call)
        return call

    def _step_messages(
        self, record: StepRecord, results: list[dict[str, Any]], as_list: bool
    ) -> list[dict[str, Any]]:
        if record.error is not None or not record.calls:
            return [
                {"role": "assistant", "content": record.action},
                {"role": "user", "content": record.observation},
            ]
        tool_calls = []
        replies = []
        for call, result in zip(record.calls, results, strict=True):
            call_id = f"call_{call.index}"
            # the conversation shows the call as the agent sent it, whatever a hook executed instead
            name, arguments = (
                (call.sent_name, call.sent_arguments) if call.rewrites else (call.name, call.arguments)
            )
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": _encode(arguments)},
                }
            )
            content = _encode(result) if as_list else record.observation
            replies.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content})
        return [{"role": "assistant", "content": "", "tool_calls": tool_calls}, *replies]

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.trace is None:
            return None
        lines = [f"task {self.trace.task_id}"]
        for s in self.trace.steps:
            lines.append(f"[{s.step}] > {s.action}")
            lines.append(f"[{s.step}] < {s.observation}")
        return "\n".join(lines)
