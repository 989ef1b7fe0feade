"""The engine's gymnasium env: one episode of a benchmark's task, played through JSON tool calls (the
benchmark contract is in ``benchmark.py``, the executor in ``executor.py``, hooks in ``hooks.py``)."""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

import gymnasium as gym
from pydantic import ValidationError

from .benchmark import COMMIT_DISPOSITION, TASK_SELECTORS, Benchmark
from .capabilities import CommitEndsEpisode, FollowUpTurns, ShorterPromptHint
from .errors import (
    SYSTEM_ERROR_KINDS,
    EnvUsageError,
    ErrorKind,
    ToolCallError,
    UnknownOptionError,
    UnknownTaskError,
    VariantError,
)
from .executor import Executor
from .hooks import Hook, Intercept, Rewrite
from .reward import RewardConfig
from .spaces import AnyText
from .state import State
from .tasks import Task, TaskSet
from .text import make_safe
from .tools import Toolset
from .trace import CallRecord, StepRecord, Trace
from .usage import OptionTypeError, checked_init, describe
from .variants import Variant, parse_variant

#: Actions longer than this are rejected with a parse error before decoding (huge-input guard).
MAX_ACTION_CHARS = 32_768
MAX_OBSERVATION_CHARS = 1_000_000
#: Per step, tool results beyond this many characters are replaced by a note asking for less.
STEP_OBSERVATION_BUDGET = 200_000
# One encoder for every observation: json.dumps(..., ensure_ascii=False) builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def _reward_config(cls: type[RewardConfig], given: RewardConfig | Mapping[str, Any] | None) -> RewardConfig:
    """The env's reward config from a config or a dict of weights (typed errors with did-you-mean)."""
    if given is None:
        return cls()
    if isinstance(given, cls):
        return given
    if not isinstance(given, Mapping):
        raise EnvUsageError(
            f"reward_config takes a {cls.__name__} or a dict of weights, got {describe(given)}."
        )
    try:
        return cls(**given)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "extra_forbidden":
            raise UnknownOptionError(key, cls.model_fields, what="reward_config weight") from None
        raise EnvUsageError(f"reward_config.{key}: {err['msg']}") from None


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nesting too deep"
    return "a number is too long" if "digits" in str(exc) else str(exc)


def _label_key(value: Any) -> tuple[str, Any]:
    """A label value as a set member: numbers by value (2 is 2.0), bools apart from numbers (True is not
    1), an unhashable value by its repr."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return (type(value).__name__, value)


def _error_json(error: dict[str, str]) -> str:
    return _encode({"ok": False, "error": error})


SchemaDialect = Literal["full", "transformers", "compact"]
#: the tool schema dialects, in order
SCHEMA_DIALECTS: tuple[str, ...] = ("full", "transformers", "compact")


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
    TRL renders the ``environment_factory`` methods, without bounds and defaults; ``compact``: for small
    models' prompts, the tool descriptions with parameter names, types, enums and the required list only,
    which TRL's ``environment_factory`` cannot render: train on it with the ``rollout_func`` path),
    ``render_mode``
    (``"ansi"``). ``reset(options=...)`` accepts ``task_id`` or ``task_index``; otherwise a task is drawn
    with the env's seeded RNG among the tasks matching ``template_id``/``templates`` and label filters
    (such as ``trap_family``); the benchmark's variant keys choose the variant. An unknown key raises
    :class:`~tooltrap.envs.core.errors.UnknownOptionError` listing the valid ones.

    ## Version History
    * v0: initial release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # every env class checks its kwargs against its own signature before it runs: a typo or a value
        # of the wrong type (``--env-arg`` hands over strings) is a typed error naming the kwarg, what
        # was given and what it takes, never a bare TypeError from Python or from deep inside a loader
        init = cls.__dict__.get("__init__")
        if init is not None:
            cls.__init__ = checked_init(init)  # type: ignore[method-assign]

    def __init__(
        self,
        benchmark: Benchmark[Any, Any, Any],
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
        if tool_schemas not in SCHEMA_DIALECTS:
            raise UnknownOptionError(str(tool_schemas), SCHEMA_DIALECTS, what="tool_schemas value")
        self.benchmark = benchmark
        # the benchmark's opt-in capabilities, looked up once (reset and step are on the hot path of RL)
        self._follow_ups = benchmark if isinstance(benchmark, FollowUpTurns) else None
        self._commits_end = benchmark if isinstance(benchmark, CommitEndsEpisode) else None
        #: whether a successful commit ends the current episode (:class:`CommitEndsEpisode`)
        self._commit_ends_episode = False
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
        #: benchmark-specific prompt options (e.g. how the state is serialized in the prompt)
        self.prompt_options: dict[str, Any] = {}
        #: label -> the values the tasks have (what a reset option filtering on it accepts), in order;
        #: keyed by type and value (True is not 1), so that 100,000 tasks with distinct labels stay linear
        values: dict[str, dict[tuple[str, Any], Any]] = {}
        for t in self.tasks:
            for k, v in t.label_dict().items():
                values.setdefault(k, {}).setdefault(_label_key(v), v)
        self._label_values: dict[str, list[Any]] = {k: list(v.values()) for k, v in values.items()}
        self._label_lookup: dict[str, frozenset[tuple[str, Any]]] = {
            k: frozenset(v) for k, v in values.items()
        }
        self._label_keys = frozenset(self._label_values)
        self._variant_keys = frozenset(benchmark.variant_model.model_fields)
        if isinstance(variant, Variant):
            self.default_variant = variant
        else:
            self.default_variant = parse_variant(
                benchmark.variant_model, variant or {}, valid_keys=self._valid_keys()
            )
        if not benchmark.plain_variants and self.default_variant != benchmark.variant_model():
            # a default variant plays every episode: it must fit every task now, not fail at some reset
            for task in self.tasks:
                try:
                    benchmark.resolve_variant(task, self.default_variant)
                except VariantError as err:
                    raise VariantError(
                        f"{err.message} (the default variant applies to every task: filter the tasks, or "
                        "pass it per episode in reset(options=...))",
                        key=err.key,
                        task_id=err.task_id or task.id,
                    ) from None
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

    __init__ = checked_init(__init__)  # type: ignore[method-assign]

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
        if self.tool_schema_dialect == "compact":
            return toolset.compact_schemas
        return toolset.schemas if self.tool_schema_dialect == "full" else toolset.transformers_schemas

    def _valid_keys(self) -> tuple[str, ...]:
        return (*TASK_SELECTORS, *sorted(self._label_keys))

    # -- gymnasium API -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if seed is not None:
            # numpy integers are fine (RL code passes them); gymnasium itself takes only int
            if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
                raise OptionTypeError("seed", seed, "a whole number >= 0 or None", where="reset argument")
            seed = int(seed)
        super().reset(seed=seed)
        if options is not None and type(options) is not dict and not isinstance(options, Mapping):
            raise EnvUsageError(f"reset(options=...) takes a dict, got {describe(options)}.")
        if (
            options is not None and len(options) == 1 and type(options.get("task_id")) is str
        ):  # the common case, fast
            task, requested = self._task_by_id(options["task_id"]), None
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
        commits_end = self._commits_end
        self._commit_ends_episode = commits_end is not None and commits_end.commit_ends_episode(task, variant)
        for hook in self.active_hooks:
            hook.on_reset(self, task, variant)
        toolset = executor.toolset
        messages = self.messages = benchmark.prompt_messages(
            task, state, toolset, variant=variant, **self.prompt_options
        )
        observation = "\n\n".join([m["content"] for m in messages])
        if len(observation) > MAX_OBSERVATION_CHARS:
            hint = benchmark.shorter_prompt_hint if isinstance(benchmark, ShorterPromptHint) else ""
            raise EnvUsageError(
                f"The prompt of task {task.id} is {len(observation):,} characters, over the observation "
                f"space's {MAX_OBSERVATION_CHARS:,}. {hint}".strip()
            )
        shown = self._variant_shown
        if variant is not shown[0]:
            shown = self._variant_shown = (variant, variant.to_dict())
        # the variant (a world label, masked atoms, an injection, an attack) is privileged: it reaches
        # the judge, the trace and privileged scripted agents (``episode_variant``), never ``info``
        info = {
            "task_id": task.id,
            "messages": list(messages),
            "tools": list(self._schemas(toolset)),
            "tool_kinds": dict(toolset.kinds),
            "terminal_tools": dict(toolset.terminals),
        }
        return observation, info

    @property
    def episode_variant(self) -> dict[str, Any]:
        """The episode's variant as a dict: privileged (what the judge and a privileged scripted agent may
        know, never what a policy sees); ``tooltrap eval`` hands it to privileged agents as
        ``info["variant"]``. Empty before the first reset."""
        shown = self._variant_shown
        return dict(shown[1]) if shown[0] is not None else {}

    def _select(self, options: Mapping[str, Any]) -> tuple[Task, dict[str, Any]]:
        """The task the reset options pick, and the variant values they ask for."""
        selectors: dict[str, Any] = {}
        requested: dict[str, Any] = {}
        for key, value in options.items():
            if key in self._variant_keys:
                requested[key] = value
            elif key in TASK_SELECTORS or key in self._label_keys:
                if value is not None:  # None: not given
                    self._check_selector(key, value)
                    selectors[key] = value
            else:
                raise UnknownOptionError(key, (*self._valid_keys(), *self._variant_keys))
        if "task_id" in selectors:
            task = self._task_by_id(selectors["task_id"])
        elif "task_index" in selectors:
            task = self.tasks[selectors["task_index"] % len(self.tasks)]
        else:
            pool = self._pool(selectors)
            task = pool[int(self.np_random.integers(len(pool)))]
        return task, requested

    def _task_by_id(self, task_id: str) -> Task:
        """The task of reset option ``task_id`` (an unknown id names the option, with a did-you-mean)."""
        try:
            return self.tasks.get(task_id)
        except UnknownTaskError:
            raise UnknownTaskError("task_id", task_id, self.tasks.ids) from None

    def _check_selector(self, key: str, value: Any) -> None:
        """A task selector or label filter of the wrong type, or a label value no task has, is a typed
        error naming the option, what was given and what it takes (before any task is looked up)."""

        def wrong(accepted: str, hint: str = "") -> OptionTypeError:
            return OptionTypeError(key, value, accepted, where="reset option", hint=hint)

        if key in ("task_id", "template_id"):
            if not isinstance(value, str):
                several = "templates" if key == "template_id" else "task_index or a label filter"
                raise wrong(f"one {key.replace('_', ' ')} (a str)", f"To draw among several, use {several}.")
        elif key == "task_index":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise wrong("a whole number", "Or pass task_id.")
        elif key == "templates":
            if not isinstance(value, str) and not (
                isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value)
            ):
                raise wrong("a template id or a non-empty list of template ids (str)")
        else:  # a label filter: one value or a list of accepted values
            values = list(value) if isinstance(value, list | tuple | set | frozenset) else [value]
            scalar = str | int | float | bool
            if not values or not all(isinstance(v, scalar) for v in values):
                raise wrong("a label value (str, number or bool) or a non-empty list of them")
            lookup = self._label_lookup.get(key, frozenset())
            for v in values:
                if _label_key(v) not in lookup:
                    shown = [str(k) for k in self._label_values.get(key, [])]
                    listed = ", ".join(shown[:12]) + (
                        f" (and {len(shown) - 12} more)" if len(shown) > 12 else ""
                    )
                    raise UnknownTaskError(f"{key} value", v, shown, hint=f"Known values of {key}: {listed}.")

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
        # the boundary: what the agent sent reaches the trace, the state, the observations and
        # info["messages"] only as text UTF-8 can encode (lone surrogates become U+FFFD, counted)
        if isinstance(action, str):
            action, escaped = make_safe(action, json_escapes=True)
            shown = action
        else:
            shown, escaped = make_safe(repr(action))
        record = StepRecord(step=step_no, action=shown, calls=[], escaped=escaped)
        trace.steps.append(record)
        calls, as_list, error = self._parse(action, record)
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
                elif call.ok and call.kind == "commit" and self._commit_ends_episode:
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
        if terminal is not None and ends_as == "answer" and self._follow_ups is not None:
            # a scripted user may answer the agent's reply (multi-turn conversations): not the end yet
            follow_up = self._follow_ups.follow_up(self.task, self.variant, trace)
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
        if record.escaped:
            info["escaped"] = record.escaped
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
            templates = filters.pop("templates", None)
            template_id = filters.pop("template_id", None)
            option = "templates" if templates else "template_id"
            templates = templates or template_id
            if isinstance(templates, str):
                templates = [templates]
            known = {t.template_id for t in self.tasks}
            for template in templates or ():
                if template not in known:  # named by the option it came in, with a did-you-mean
                    raise UnknownTaskError(f"{option} value", template, sorted(known))
            pool = self.tasks.select(templates=templates, **filters)
            if not len(pool):
                raise EnvUsageError(f"No task matches the reset options {filters}.")
            self._pools[key] = pool
        return pool

    def _parse(
        self, action: Any, record: StepRecord | None = None
    ) -> tuple[list[tuple[Any, Any]], bool, dict[str, str] | None]:
        """Decode the action into (name, arguments) pairs; an action-level error otherwise. Arguments
        sent as a JSON string are made safe before they are decoded (counted on ``record``)."""

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
                # JSON inside JSON: its escapes were text to the first decoding, so check them now
                arguments, escaped = make_safe(arguments, json_escapes=True)
                if escaped and record is not None:
                    record.escaped += escaped
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
