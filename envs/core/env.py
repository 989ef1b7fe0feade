"""The engine's gymnasium env, the executor shared with the oracle, and the benchmark plug-in base."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym

from .errors import EnvUsageError, ErrorKind, ToolCallError
from .reward import RewardConfig
from .spaces import AnyText
from .state import Change, State
from .tasks import Task, TaskSet
from .tools import Backend, Toolset
from .trace import CallRecord, StepRecord, Trace, WriteRecord

#: Actions longer than this are rejected with a parse error before decoding (huge-input guard).
MAX_ACTION_CHARS = 32_768
MAX_OBSERVATION_CHARS = 1_000_000
# One encoder for every observation: json.dumps(..., ensure_ascii=False) builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


class Benchmark:
    """A benchmark plugs into the engine by subclassing this and setting the class attributes.

    Adding a benchmark never changes the engine: backends declare tools, the task model declares the
    data, ``judge`` is the oracle and ``reward_config`` turns its verdict into a scalar.
    """

    name: ClassVar[str] = ""
    backends: ClassVar[tuple[type[Backend], ...]] = ()
    task_model: ClassVar[type[Task]] = Task
    reward_config_cls: ClassVar[type[RewardConfig]] = RewardConfig
    #: collection -> domain (system) it belongs to
    collection_domains: ClassVar[dict[str, str]] = {}
    max_steps: ClassVar[int] = 16
    max_consecutive_errors: ClassVar[int] = 5
    max_calls_per_step: ClassVar[int] = 8

    def __init__(self) -> None:
        self._toolsets: dict[tuple[str, ...] | None, Toolset] = {}

    def toolset(self, task: Task) -> Toolset:
        key = tuple(task.tools) if task.tools is not None else None
        if key not in self._toolsets:
            self._toolsets[key] = Toolset(self.backends, include=key)
        return self._toolsets[key]

    def prompt_messages(
        self, task: Task, state: State, toolset: Toolset, **options: Any
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

    def unauthorized_writes(self, task: Task, writes: list[WriteRecord], state: State) -> list[WriteRecord]:
        """Which of ``writes`` (already applied to ``state``) the task's user did not authorize. Backs
        the simulated user of confirmation gates; benchmarks without an authorization set can't."""
        raise NotImplementedError(f"{type(self).__name__} has no authorization set for a simulated user.")

    def verdict_dict(self, verdict: Any) -> dict[str, Any]:
        return verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)


@dataclass(slots=True)
class Intercept:
    """Returned by a hook's ``before_call`` to answer a call without executing it (gates, previews)."""

    result: Any
    ok: bool = True


class Hook:
    """Extension point inside ``step``: parameter injection, observation masking, adversarial content,
    gates. Install with ``env.unwrapped.add_hook(hook)``. All methods are optional no-ops."""

    def on_reset(self, env: ToolEnv, task: Task) -> None:
        """Called after the state is built, before the first observation."""

    def before_call(self, env: ToolEnv, name: str, arguments: Any) -> tuple[str, Any] | Intercept:
        """Rewrite a parsed call (name, arguments), or answer it with an :class:`Intercept`."""
        return name, arguments

    def after_call(self, env: ToolEnv, record: CallRecord) -> None:
        """Inspect or rewrite ``record.result`` / ``record.error`` before it is rendered."""


class Executor:
    """Runs validated tool calls against a state, atomically, producing :class:`CallRecord` s.

    Shared by the env and the oracle's replay so both see exactly the same semantics.
    """

    __slots__ = ("benchmark", "task", "toolset", "state", "_bound", "_backends")

    def __init__(self, benchmark: Benchmark, task: Task, state: State | None = None):
        self.benchmark = benchmark
        self.task = task
        self.toolset = benchmark.toolset(task)
        self.state = state if state is not None else task.make_state()
        self._bound: dict[str, Any] = {}
        self._backends: dict[type[Backend], Backend] = {}

    def bound_tool(self, name: str) -> Any:
        """The tool method bound to this executor's state (backends are built on first use)."""
        fn = self._bound.get(name)
        if fn is None:
            owner = self.toolset.owner[name]
            backend = self._backends.get(owner)
            if backend is None:
                backend = self._backends[owner] = owner(self.state)
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
        except Exception as exc:  # a backend bug must not corrupt the episode
            state.rollback(mark)
            err = ToolCallError(f"Internal tool failure: {type(exc).__name__}: {exc}")
            return CallRecord(index, step, name, arguments, ok=False, kind=None, error=err.to_dict())
        record = CallRecord(index, step, name, arguments, ok=True, kind=spec.kind, result=result)
        if len(state.log) > mark[0]:
            record.writes = self._writes(name, state.log[mark[0] :])
        return record

    def _writes(self, tool: str, changes: list[Change]) -> list[WriteRecord]:
        """One record per affected entity (fields merged across the call's changes)."""
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
        for change in merged.values():
            if change.op == "create" and state.get(change.collection, change.entity_id) is None:
                continue  # created and deleted within one call: no net effect
            out.append(describe(tool, change, state))
        return out


def _error_json(error: dict[str, str]) -> str:
    return _encode({"ok": False, "error": error})


class ToolEnv(gym.Env[str, str]):
    """A tool-using agent acting on a simulated system through JSON tool calls.

    ## Description
    Each episode is one task: an instruction, a simulated state and a set of tools. The agent acts by
    emitting tool calls; the episode ends at the first terminal tool call (e.g. ``respond`` or
    ``clarify``), or is truncated by the step cap or too many consecutive errors. The benchmark's oracle
    then judges the trace and the reward is computed from its verdict.

    ## Action Space
    ``AnyText``: a string holding one JSON tool call ``{"name": ..., "arguments": {...}}`` or a JSON
    list of them (at most ``max_calls_per_step``). ``arguments`` may also be a JSON-encoded string.

    ## Observation Space
    ``AnyText``: after ``reset`` the rendered prompt (``info["tool_kinds"]`` maps each tool to read /
    write / commit / terminal); after ``step`` the JSON of the tool result(s):
    ``{"tool": name, "ok": true, "result": ...}`` or ``{"tool": name, "ok": false, "error": {"type":
    ..., "message": ..., "hint": ...}}`` (a list when the action was a list). Structured chat messages
    (OpenAI format) are in ``info["messages"]`` (the prompt at reset, this step's new messages after) and
    the tool schemas in ``info["tools"]`` at reset.

    ## Rewards
    0 on every non-final step; on the final step (terminated or truncated) the benchmark's reward of the
    oracle verdict, with ``info["reward_components"]`` and ``info["verdict"]``.

    ## Episode End
    Terminated by a terminal tool call; truncated after ``max_steps`` steps or
    ``max_consecutive_errors`` consecutive steps whose calls all failed.

    ## Arguments
    ``benchmark`` (a :class:`Benchmark`), ``tasks`` (the tasks to draw from), ``reward_config``,
    ``max_steps``, ``render_mode`` (``"ansi"``). ``reset(options=...)`` accepts ``task_id`` or
    ``task_index``; otherwise a task is drawn with the env's seeded RNG, among the tasks matching any
    other options (``template_id``/``templates`` or label filters such as ``trap_family``).

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
        render_mode: str | None = None,
    ):
        if not len(tasks):
            raise EnvUsageError("No tasks to run: the task selection is empty. Check your filters.")
        if render_mode not in (None, "ansi"):
            raise EnvUsageError(f"Unsupported render_mode {render_mode!r}; use 'ansi' or None.")
        self.benchmark = benchmark
        self.tasks: TaskSet[Any] = tasks if isinstance(tasks, TaskSet) else TaskSet(tasks)
        if reward_config is None:
            reward_config = benchmark.reward_config_cls()
        elif isinstance(reward_config, dict):
            reward_config = benchmark.reward_config_cls(**reward_config)
        self.reward_config = reward_config
        self.max_steps = max_steps or benchmark.max_steps
        self.render_mode = render_mode
        self.action_space = AnyText(MAX_ACTION_CHARS)
        self.observation_space = AnyText(MAX_OBSERVATION_CHARS)
        self.hooks: list[Hook] = []
        #: benchmark-specific prompt options (e.g. SABench's ``state_format``)
        self.prompt_options: dict[str, Any] = {}
        self._pools: dict[str, TaskSet[Any]] = {}
        self.task: Any = None
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
        self.hooks.append(hook)

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        if self.task is None:
            raise EnvUsageError("Call reset() first: the tools depend on the task.")
        return self.benchmark.toolset(self.task).schemas

    # -- gymnasium API -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        if "task_id" in options:
            task = self.tasks.get(options["task_id"])
        elif "task_index" in options:
            task = self.tasks[int(options["task_index"]) % len(self.tasks)]
        else:
            pool = self._pool({k: v for k, v in options.items() if v is not None})
            task = pool[int(self.np_random.integers(len(pool)))]
        self.task = task
        self.executor = Executor(self.benchmark, task)
        self.state = self.executor.state
        self.trace = Trace(task_id=task.id)
        self.verdict = None
        self._done = False
        self._n_calls = 0
        self._consecutive_errors = 0
        for hook in self.hooks:
            hook.on_reset(self, task)
        self.messages = self.benchmark.prompt_messages(
            task, self.state, self.executor.toolset, **self.prompt_options
        )
        observation = "\n\n".join(m["content"] for m in self.messages)
        toolset = self.executor.toolset
        info = {
            "task_id": task.id,
            "messages": list(self.messages),
            "tools": list(toolset.schemas),
            "tool_kinds": dict(toolset.kinds),
        }
        return observation, info

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
        if error is not None:
            record.error = error
            trace.error_counts[error["type"]] += 1
            observation = _error_json(error)
        else:
            for name, arguments in calls:
                call = self._run_call(name, arguments, step_no)
                record.calls.append(call)
                if call.ok:
                    results.append({"tool": call.name, "ok": True, "result": call.result})
                else:
                    trace.error_counts[call.error["type"]] += 1  # type: ignore[index]
                    results.append({"tool": call.name, "ok": False, "error": call.error})
                if call.ok and call.kind == "terminal":
                    terminal = call
                    break
            observation = _encode(results if as_list else results[0])
        record.observation = observation
        all_failed = error is not None or all(not c.ok for c in record.calls)
        self._consecutive_errors = self._consecutive_errors + 1 if all_failed else 0

        terminated = terminal is not None
        truncated = False
        if terminal is not None:
            trace.terminal = terminal.name
            trace.terminal_arguments = terminal.arguments if isinstance(terminal.arguments, dict) else None
        elif self._consecutive_errors >= self.benchmark.max_consecutive_errors:
            truncated, trace.truncated = True, "consecutive_errors"
        elif len(trace.steps) >= self.max_steps:
            truncated, trace.truncated = True, "max_steps"

        new_messages = self._step_messages(record, results, as_list)
        self.messages.extend(new_messages)
        info: dict[str, Any] = {"step": step_no, "messages": new_messages, "n_errors": trace.n_errors}
        reward = 0.0
        if terminated or truncated:
            self._done = True
            self.verdict = self.benchmark.judge(self.task, trace)
            reward, components = self.reward_config.score(self.verdict)
            info["verdict"] = self.benchmark.verdict_dict(self.verdict)
            info["reward_components"] = components
        return observation, float(reward), terminated, truncated, info

    def abort(self, reason: str) -> dict[str, Any]:
        """End the episode from outside (a provider error, a content filter, a trainer that stopped
        generating): the trace is truncated with ``reason`` and judged as it stands. Returns the final
        info (verdict, reward, components)."""
        if self.trace is None:
            raise EnvUsageError("Cannot abort before reset().")
        if self._done:
            raise EnvUsageError("The episode has already ended.")
        self._done = True
        self.trace.truncated = reason
        self.verdict = self.benchmark.judge(self.task, self.trace)
        reward, components = self.reward_config.score(self.verdict)
        return {
            "verdict": self.benchmark.verdict_dict(self.verdict),
            "reward": float(reward),
            "reward_components": components,
        }

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
        except (json.JSONDecodeError, RecursionError) as exc:
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "nesting too deep"
            return fail(f"Action is not valid JSON: {detail}.", hint=hint)
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
                except (json.JSONDecodeError, RecursionError):
                    return fail("'arguments' is a string but not valid JSON.", hint=hint)
            calls.append((item["name"], arguments))
        return calls, as_list, None

    def _run_call(self, name: Any, arguments: Any, step_no: int) -> CallRecord:
        assert self.executor is not None
        index = self._n_calls
        self._n_calls += 1
        for hook in self.hooks:
            rewritten = hook.before_call(self, name, arguments)
            if isinstance(rewritten, Intercept):
                kind = self.executor.toolset.specs[name].kind if name in self.executor.toolset.specs else None
                call = CallRecord(
                    index, step_no, str(name), arguments, ok=rewritten.ok, kind=kind, intercepted=True
                )
                if rewritten.ok:
                    call.result = rewritten.result
                else:
                    call.error = rewritten.result
                break
            name, arguments = rewritten
        else:
            call = self.executor.execute(name, arguments, step=step_no, index=index)
        for hook in self.hooks:
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
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": _encode(call.arguments),
                    },
                }
            )
            content = _encode(result) if as_list else record.observation
            replies.append({"role": "tool", "tool_call_id": call_id, "name": call.name, "content": content})
        return [{"role": "assistant", "content": "", "tool_calls": tool_calls}, *replies]

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.trace is None:
            return None
        lines = [f"task {self.trace.task_id}"]
        for s in self.trace.steps:
            lines.append(f"[{s.step}] > {s.action}")
            lines.append(f"[{s.step}] < {s.observation}")
        return "\n".join(lines)
