"""AgentProp-Bench wiring: the injection variant (applied to the agent's first tool call before
validation, as an episode hook: the call record keeps the agent's arguments and the executed ones), the
release's validation-error shape, the benchmark plug-in, the packaged tasks and the env. The judge
(stage indicators, fabrication, grounding, the answer checker) is in :mod:`.judge`, the reward in
:mod:`.reward`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from tooltrap.envs.core import (
    Benchmark,
    Executor,
    Hook,
    InitialState,
    RewardConfig,
    Rewrite,
    State,
    TaskCheckError,
    TaskSet,
    TaskValidationError,
    ToolEnv,
    Trace,
    UnknownOptionError,
    Variant,
    did_you_mean,
    parse_tasks,
)
from tooltrap.envs.core.tasks import read_task_file
from tooltrap.envs.core.tools import MAX_PROBLEMS

from .injection import inject
from .judge import AgentPropVerdict, check_answer
from .judge import judge as judge_episode
from .reward import AgentPropReward
from .task import NOW, AgentPropTask, base_state, packaged_tasks
from .tools.simulators import BACKENDS

DOMAINS = ("weather", "calendar", "medical", "knowledge", "retail")
CORE = ("weather", "calendar", "medical", "knowledge")
SYSTEM_PROMPT = (
    "You are an assistant with tools for weather, calendars, medical records, a knowledge base and a shop. "
    "Use the tools to answer; report only what the tools returned. If the tools fail you and you cannot answer "
    "reliably, say so with abstain. Give the answer with final_answer.\n\nCurrent time: {now}."
)


class InjectionVariant(Variant):
    """``injection``: the corruption applied to the agent's first tool call (``none`` for a clean run)."""

    injection: Literal["none", "type_mismatch", "out_of_range", "missing_required", "semantic_wrong"] = "none"


class FirstCallInjection(Hook):
    """Rewrite, with the variant's injection (before validation), the first call of the task's
    injectable tool: the tool of gold's first call (the call the paper corrupts), whatever the agent
    called before it, so a throwaway first call cannot absorb the injection."""

    def __init__(self, kind: str, tool: str | None):
        self.kind = kind
        self.tool = tool
        self.done = False

    def before_call(self, env: Any, name: str, arguments: Any) -> tuple[str, Any] | Rewrite:
        if self.done or name != self.tool:
            return name, arguments
        self.done = True
        specs = env.executor.toolset.specs if env.executor is not None else {}
        if not isinstance(name, str) or name not in specs or specs[name].kind == "terminal":
            return name, arguments
        result = inject(self.kind, arguments, specs[name].schema["function"]["parameters"])
        if not result.applicable:
            return name, arguments
        return Rewrite(name, result.arguments, kind="injection", reason=f"{self.kind}: {result.rule}")


_JSON_TYPES = {
    "integer": int,
    "number": (int, float),
    "string": str,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def release_messages(arguments: Any, parameters: dict[str, Any]) -> list[str]:
    """The release's validation report for ``arguments`` under a tool's JSON schema: missing required,
    unknown parameters, wrong types, integer bounds and enum violations (this library's wording). Like
    the engine's validation, it stops at the first ``MAX_PROBLEMS`` (100) problems and says so: 2,000
    unknown names made a 51,000-character error that the judge then read whole."""
    if not isinstance(arguments, dict):
        return ["Arguments must be a JSON object"]
    properties = parameters.get("properties", {})
    out = [f"Missing required parameter: {p}" for p in parameters.get("required", []) if p not in arguments]
    unknown = (f"Unknown parameter: {k}" for k in arguments if k not in properties)
    out += itertools.islice(unknown, MAX_PROBLEMS + 1 - len(out))
    if len(out) > MAX_PROBLEMS:
        return [*out[:MAX_PROBLEMS], f"(stopped at the first {MAX_PROBLEMS} problems)"]
    for key, value in arguments.items():
        schema = properties.get(key)
        if schema is None:
            continue
        wanted = _JSON_TYPES.get(schema.get("type", ""), object)
        if not isinstance(value, wanted) or (isinstance(value, bool) and schema.get("type") != "boolean"):
            out.append(f"Parameter '{key}' must be of type {schema.get('type')}")
            continue
        if "enum" in schema and value not in schema["enum"]:
            out.append(f"Parameter '{key}' must be one of {schema['enum']}")
        if isinstance(value, int | float) and "minimum" in schema and value < schema["minimum"]:
            out.append(f"Parameter '{key}' must be >= {schema['minimum']}")
        if isinstance(value, int | float) and "maximum" in schema and value > schema["maximum"]:
            out.append(f"Parameter '{key}' must be <= {schema['maximum']}")
    return out


class ReleaseErrorShape(Hook):
    """Adds the release's ``{"error": "<messages joined by '; '>"}`` to each validation error, inside the
    engine's typed error (``error["release"]``), so an agent sees what the release's agents saw."""

    def after_call(self, env: Any, record: Any) -> None:
        if record.ok or (record.error or {}).get("type") != "invalid_arguments":
            return
        spec = env.executor.toolset.specs.get(record.name) if env.executor is not None else None
        if spec is None:
            return
        messages = release_messages(record.arguments, spec.schema["function"]["parameters"])
        if messages:
            record.error = {**record.error, "release": {"error": "; ".join(messages)}}


class AgentProp(Benchmark[AgentPropTask, AgentPropVerdict, InjectionVariant]):
    """AgentProp-Bench: error propagation and fabricated tool use (seed 003_ec3875cd178b8635)."""

    name = "agentprop"
    backends = BACKENDS
    task_model = AgentPropTask
    reward_config_cls = AgentPropReward
    variant_model = InjectionVariant
    cluster_by = "domain"
    max_steps = 8

    def judge(self, task: AgentPropTask, trace: Trace) -> AgentPropVerdict:
        return judge_episode(self, task, trace)

    def check_task(self, task: AgentPropTask) -> None:
        """The engine's checks (tools exist, gold calls validate), plus what the judge relies on: a known
        domain; gold is at least one tool call (the injection corrupts the first) and then one
        ``final_answer``; every gold tool call succeeds on the simulators' world (the reference came
        from their results, and the judge grounds answers in them: a call naming a record the world
        lacks would fail only at the episode's end); and the gold answer states the reference facts
        (else the careful answer itself would be judged wrong)."""
        super().check_task(task)
        if task.domain not in DOMAINS:
            raise TaskCheckError(
                "domain", f"unknown domain {task.domain!r}.{did_you_mean(task.domain, DOMAINS)}"
            )
        gold = task.gold
        if not gold:
            raise TaskCheckError("gold", "empty: gold is the careful agent's tool calls, then final_answer")
        for i, call in enumerate(gold):
            last = i == len(gold) - 1
            if last != (call.name in TERMINALS):
                what = "ends with final_answer" if last else f"has {call.name} only as its last call"
                raise TaskCheckError(f"gold.{i}.name", f"gold {what}")
        if gold[-1].name != "final_answer":
            raise TaskCheckError(
                f"gold.{len(gold) - 1}.name", "gold ends with final_answer (the reference answer)"
            )
        if len(gold) < 2:
            raise TaskCheckError(
                "gold", "gold needs a tool call before final_answer (the injection corrupts it)"
            )
        executor = Executor(self, task, state=State(base_state(), now=NOW))
        for i, call in enumerate(gold[:-1]):
            record = executor.execute(call.name, call.arguments, step=i, index=i)
            if not record.ok:
                message = (record.error or {}).get("message", "failed")
                raise TaskCheckError(f"gold.{i}", f"{call.name} fails on the simulators' world: {message}")
        answer = gold[-1].arguments.get("answer")
        if not isinstance(answer, str) or not check_answer(answer, task.reference):
            raise TaskCheckError(
                f"gold.{len(gold) - 1}.arguments.answer",
                "the gold answer does not state every reference fact (the judge would score it wrong)",
            )

    def episode_hooks(self, task: AgentPropTask, variant: InjectionVariant) -> Sequence[Hook]:
        target = next((c.name for c in task.gold if c.name not in ("final_answer", "abstain")), None)
        injection = (FirstCallInjection(variant.injection, target),) if variant.injection != "none" else ()
        return (*injection, ReleaseErrorShape())

    def prompt_messages(
        self, task: AgentPropTask, state: Any, toolset: Any, *, variant: Variant | None = None
    ) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": SYSTEM_PROMPT.format(now=state.now)},
            {"role": "user", "content": task.instruction},
        ]


@cache
def benchmark() -> AgentProp:
    return AgentProp()


@cache
def _tasks() -> TaskSet[AgentPropTask]:
    return TaskSet(packaged_tasks())


TERMINALS = ("final_answer", "abstain")


def load_task_file(path: str | Path) -> list[AgentPropTask]:
    """A user's task file (a JSON list, ``{"tasks": [...]}`` or JSONL), rows as the packaged ones:
    every field but ``initial_state`` (the simulators' shared world is attached to each; a row that
    brings another world is refused, the simulators and the reference run on theirs). Every task is
    checked (:meth:`AgentProp.check_task`); errors name the file, the task and the field."""
    source = str(path)
    rows = read_task_file(path)
    world = InitialState(collections=base_state(), now=NOW)  # one world object, shared by every task
    shared: dict[str, Any] | None = None
    attached = []
    for index, row in enumerate(rows):
        if "initial_state" in row:
            shared = shared if shared is not None else world.model_dump(mode="json")
            if row["initial_state"] != shared:
                label = str(row.get("id", f"#{index}"))[:200]
                raise TaskValidationError(
                    "AgentProp tasks share the simulators' world: leave initial_state out (it is attached)",
                    file=source,
                    task_id=label,
                    field="initial_state",
                )
        attached.append({**row, "initial_state": world})
    return parse_tasks(attached, AgentPropTask, source=source, check=benchmark().check_task)


class AgentPropEnv(ToolEnv):
    """AgentProp-Bench: a corrupted first tool call, and whether the error reaches the final answer.

    ## Description
    Deterministic simulators (weather, calendar, medical, knowledge, retail) and generated tasks
    (easy: one tool, medium: two, hard: three or more with a branch). The variant ``injection``
    corrupts the agent's first tool call before validation with the release's rules (the call record
    keeps the agent's arguments beside the executed ones; an injection that would change nothing is
    not applied and is reported as not applicable). A validation error carries the release's
    ``{"error": ...}`` as ``error.release``. The judge reports the stage indicators S1-S3, the answer's
    correctness against the reference facts (grounded in the observations), abstention and fabrication.

    ## Action Space / Observation Space
    Text tool calls and their results (see :class:`~tooltrap.envs.core.ToolEnv`).

    ## Rewards
    :class:`~tooltrap.envs.agentprop.reward.AgentPropReward`: a correct answer +1; fabrication -1 (more than a wrong answer, -0.5); an
    explicit abstention when the injected error left the task unanswerable +0.5; each successful write
    beyond the gold solution's -0.25; invalid calls -0.05. The checker holds answers to a length and
    number budget and rejects hedges (most of a closed vocabulary), so dumping every observation or
    listing candidates does not pass.

    ## Episode End
    ``final_answer`` or ``abstain``; the step cap is 8.

    ## Arguments
    ``domain`` (``core`` = the four core domains, ``all``, or one domain), ``injection`` (the default
    variant), ``tasks_file`` (a user's task file instead of the packaged tasks, rows as the packaged
    ones without ``initial_state``; checked when it loads, see :func:`load_task_file`; ``core`` and
    ``all`` keep every task of the file, one domain keeps that domain's), ``reward_config``,
    ``max_steps``, ``tool_schemas``, ``render_mode``.

    ## Version History
    * v0: initial release.
    """

    def __init__(
        self,
        domain: str = "core",
        injection: str = "none",
        tasks_file: str | Path | None = None,
        reward_config: RewardConfig | dict[str, Any] | None = None,
        max_steps: int | None = None,
        tool_schemas: str = "full",
        render_mode: str | None = None,
    ):
        if domain not in ("core", "all", *DOMAINS):
            raise UnknownOptionError(domain, ("core", "all", *DOMAINS), what="domain")
        if tasks_file is not None:
            tasks = load_task_file(tasks_file)
            pool = [t for t in tasks if domain in ("core", "all") or t.domain == domain]
        else:
            wanted = CORE if domain == "core" else DOMAINS if domain == "all" else (domain,)
            pool = [t for t in _tasks() if t.domain in wanted]
        super().__init__(
            benchmark(),
            pool,
            reward_config=reward_config,
            max_steps=max_steps,
            variant={"injection": injection},
            tool_schemas=tool_schemas,  # type: ignore[arg-type]
            render_mode=render_mode,
        )
