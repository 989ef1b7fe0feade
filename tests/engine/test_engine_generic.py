"""The engine is generic: variants, typed hooks and intercepts, defenses as wrappers, constrained
schemas, system errors apart from the agent's, registries instead of benchmark names, one reward
vocabulary, and prompts cached by task object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import gymnasium as gym
import pytest
from pydantic import Field

import tests.toybench as toy
from tests.conftest import act
from tooltrap.envs.core import (
    BENCHMARKS,
    REWARD_COMPONENTS,
    Backend,
    Condition,
    EnvUsageError,
    ErrorKind,
    Hook,
    Intercept,
    RewardConfig,
    RewardDefinitionError,
    Rewrite,
    TaskValidationError,
    ToolCallError,
    ToolDefinitionError,
    Toolset,
    UnknownOptionError,
    VariantError,
    abort_episode,
    load_tasks,
    register_condition,
    tool,
)
from tooltrap.envs.sabench import SABenchTask, make_env, packaged_tasks
from tooltrap.wrappers.defenses import DEFENSES, ConfirmationGate, Defense, apply_defense, register_defense

CASCADE = "cal-cascade-dependent-cancel-occurrence-01"
TASK = "lib-fiction-01"


def _toy(**kwargs: Any) -> gym.Env:
    return gym.make(f"tests.toybench:{toy.ENV_ID}", **kwargs)


def _lend(days: int = 14) -> str:
    return act("library_lend", book_id="b1", member_id="m1", days=days)


# -- variants ------------------------------------------------------------------------------------------
def test_reset_options_take_the_benchmarks_variant_keys():
    env = _toy()
    _, info = env.reset(seed=0, options={"task_id": TASK, "stock": "out"})
    assert env.unwrapped.episode_variant == {
        "stock": "out",
        "days": 14,
    }  # days: the task's own, filled by resolve_variant
    assert env.unwrapped.state.get("books", "b1")["copies"] == 0  # the variant built the world
    _, info = env.reset(seed=0, options={"task_id": TASK})
    assert (
        env.unwrapped.episode_variant["stock"] == "available"
        and env.unwrapped.state.get("books", "b1")["copies"] == 2
    )


def test_unknown_option_keys_and_values_are_typed_errors_with_did_you_mean():
    env = _toy()
    with pytest.raises(UnknownOptionError, match="Did you mean 'stock'") as err:
        env.reset(options={"stok": "out"})
    assert "task_id" in str(err.value) and "days" in str(err.value)  # the valid keys are listed
    with pytest.raises(VariantError, match="'available', 'out'") as err:
        env.reset(options={"stock": "gone"})
    assert err.value.key == "stock"
    with pytest.raises(VariantError, match="1-28") as err:
        env.reset(options={"task_id": TASK, "days": 99})
    assert err.value.task_id == TASK
    # SABench has no variant: its option errors list the selectors and labels
    with pytest.raises(UnknownOptionError, match="Did you mean 'trap_family'"):
        make_env("calendar").reset(options={"trap_famly": "cascade"})
    with pytest.raises(UnknownOptionError, match="mask"):
        make_env("calendar").reset(options={"mask": ["a1"]})


def test_benchmark_definitions_are_checked():
    from tooltrap.envs.core import Benchmark, Variant

    with pytest.raises(EnvUsageError, match="taken by"):

        class Impostor(Benchmark):
            name = "toylibrary"

    class Clash(Variant):
        task_id: str = "x"

    with pytest.raises(EnvUsageError, match="reserved"):

        class Reserved(Benchmark):
            name = "test-reserved"
            variant_model = Clash

    with pytest.raises(EnvUsageError, match="no episode variants"):
        from tooltrap.agents import make_agent
        from tooltrap.evaluate import evaluate

        evaluate("SABench-Calendar-v0", make_agent("gold"), "unused", variants=[{"world": "safe"}])


def test_env_kwargs_set_the_default_variant():
    env = _toy(stock="out")
    _, info = env.reset(seed=0, options={"task_id": TASK})
    assert env.unwrapped.episode_variant["stock"] == "out"
    _, info = env.reset(seed=0, options={"task_id": TASK, "stock": "available"})
    assert env.unwrapped.episode_variant["stock"] == "available"
    with pytest.raises(VariantError):
        _toy(stock="sold")


class _Recorder(Hook):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_reset(self, env, task, variant):  # type: ignore[no-untyped-def]
        self.seen.append((task.id, variant.stock))


def test_variant_reaches_hooks_trace_replay_and_judge():
    env = _toy()
    hook = _Recorder()
    env.unwrapped.add_hook(hook)
    verdicts = {}
    for stock in ("available", "out"):
        env.reset(seed=0, options={"task_id": TASK, "stock": stock})
        env.step(_lend())
        _, _, _, _, info = env.step(act("respond", message="Lent."))
        verdicts[stock] = info["verdict"]
        assert env.unwrapped.trace.variant.stock == stock
        assert env.unwrapped.trace.to_dict()["variant"] == {"stock": stock, "days": 14}
    assert hook.seen == [(TASK, "available"), (TASK, "out")]
    # the same actions: legal in one world, an unsafe commit in the other (the judge replays the variant)
    assert verdicts["available"]["goal"] and not verdicts["available"]["unsafe"]
    assert verdicts["out"]["unsafe"] and not verdicts["out"]["goal"]


# -- constrained schemas ---------------------------------------------------------------------------------
def test_annotated_bounds_literals_and_defaults_reach_schema_and_validator():
    spec = Toolset([toy.LibraryBackend])["library_lend"]
    props = spec.parameters["properties"]
    assert props["days"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 28,
        "default": 14,
        "description": "Loan period in days (1-28).",
    }
    assert props["format"]["enum"] == ["print", "ebook"] and props["format"]["default"] == "print"
    assert spec.validate({"book_id": "b1", "member_id": "m1"})["days"] == 14
    with pytest.raises(ToolCallError, match="less than or equal to 28") as err:
        spec.validate({"book_id": "b1", "member_id": "m1", "days": 99})
    assert err.value.kind is ErrorKind.INVALID_ARGUMENTS
    with pytest.raises(ToolCallError):
        spec.validate({"book_id": "b1", "member_id": "m1", "format": "vinyl"})
    # what transformers can write: the same schema without bounds and defaults
    assert spec.transformers_schema["function"]["parameters"]["properties"]["days"] == {
        "type": "integer",
        "description": "Loan period in days (1-28).",
    }


def test_string_and_list_constraints_and_unsupported_field_options():
    class Demo(Backend):
        domain = "demo"

        @tool("write")
        def demo_tag(
            self,
            label: Annotated[str, Field(min_length=1, max_length=8, pattern="^[a-z]+$")],
            names: Annotated[list[Annotated[str, Field(max_length=3)]], Field(max_length=2)] = (),  # type: ignore[assignment]
            ratio: Annotated[float, Field(gt=0, lt=1)] | None = None,
        ) -> dict:
            """Tag things.

            Args:
                label: The tag.
                names: Who.
                ratio: How much.
            """
            return {}

    spec = Demo.tool_specs()[0]
    props = spec.parameters["properties"]
    assert props["label"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 8,
        "pattern": "^[a-z]+$",
        "description": "The tag.",
    }
    assert props["names"]["maxItems"] == 2 and props["names"]["items"] == {"type": "string", "maxLength": 3}
    assert props["ratio"]["exclusiveMinimum"] == 0 and props["ratio"]["nullable"] is True
    with pytest.raises(ToolCallError):
        spec.validate({"label": "Bad!"})
    with pytest.raises(ToolCallError):
        spec.validate({"label": "ok", "names": ["a", "b", "c"]})
    with pytest.raises(ToolDefinitionError, match="defaults in the signature"):

        class BadDefault(Backend):
            domain = "demo"

            @tool("read")
            def demo_get(self, n: Annotated[int, Field(default=3)]) -> dict:
                """Get.

                Args:
                    n: How many.
                """
                return {}

    with pytest.raises(ToolDefinitionError, match="only for terminal"):
        tool("read", ends_as="abstain")


def test_toy_schemas_match_snapshot_and_transformers_renders_the_transformers_dialect():
    from transformers.utils import get_json_schema

    from tooltrap.training import environment_class

    toolset = Toolset([toy.LibraryBackend])
    snapshot = Path(__file__).parents[1] / "snapshots" / "toylibrary_tools.json"
    current = json.dumps(toolset.schemas, indent=1, sort_keys=True) + "\n"
    if not snapshot.exists():
        snapshot.write_text(current)
    assert current == snapshot.read_text(), "toy tool schemas changed: delete the snapshot and review"
    env_class = environment_class(f"tests.toybench:{toy.ENV_ID}")
    for schema in toolset.transformers_schemas:
        name = schema["function"]["name"]
        assert json.dumps(get_json_schema(getattr(env_class, name))) == json.dumps(schema), name
    # a tool without bounds or shown defaults is the same bytes in both dialects
    from tooltrap.envs.sabench import BACKENDS

    sabench = Toolset(BACKENDS)
    plain = [s for s in sabench.schemas if not s["function"]["parameters"]["properties"]]
    assert plain and all(s in sabench.transformers_schemas for s in plain)
    _, info = _toy(tool_schemas="transformers").reset(seed=0)
    assert info["tools"] == toolset.transformers_schemas


# -- hooks, intercepts, rewrites, defenses ----------------------------------------------------------------
class _Inject(Hook):
    """Parameter injection: the first lend call gets an out-of-range period."""

    def before_call(self, env, name, arguments):  # type: ignore[no-untyped-def]
        if name == "library_lend":
            return Rewrite(name, {**arguments, "days": 99}, kind="injection", reason="out_of_range: days x7")
        return name, arguments


def test_rewrites_keep_the_agents_call_beside_the_executed_one():
    env = _toy()
    env.unwrapped.add_hook(_Inject())
    env.reset(seed=0, options={"task_id": TASK})
    obs, *_ = env.step(_lend(14))
    call = env.unwrapped.trace.steps[-1].calls[0]
    assert call.sent_arguments["days"] == 14 and call.arguments["days"] == 99
    assert call.rewrites == [{"kind": "injection", "reason": "out_of_range: days x7"}]
    assert call.error["type"] == "invalid_arguments" and "28" in call.error["message"]
    record = call.to_dict()
    assert record["sent_arguments"]["days"] == 14 and record["arguments"]["days"] == 99
    # the conversation shows the call as the agent sent it
    step_messages = env.unwrapped.messages[-2:]
    assert json.loads(step_messages[0]["tool_calls"][0]["function"]["arguments"])["days"] == 14


class _Gate(Defense):
    """Test gate: lending waits for a librarian."""

    def before_call(self, env, name, arguments):  # type: ignore[no-untyped-def]
        if name == "library_lend":
            return Intercept({"held": True}, kind="gate", reason="needs a librarian", ends_as="escalate")
        return name, arguments


def test_intercepts_are_typed_counted_and_can_end_the_episode():
    env = _Gate(_toy())
    env.reset(seed=0, options={"task_id": TASK, "stock": "out"})
    _, _, terminated, _, info = env.step(_lend())
    assert terminated
    trace = env.unwrapped.trace
    assert trace.intercept_counts == {"gate": 1} and trace.disposition == "escalate"
    call = trace.steps[0].calls[0]
    assert call.intercept == {"kind": "gate", "reason": "needs a librarian", "ends_as": "escalate"}
    assert call.intercepted and not call.writes
    assert info["verdict"]["goal"] and not info["verdict"]["unsafe"]  # escalated, nothing lent


class _AbstainOnErrors(Defense):
    """Test interceptor: an answer given after a failed call becomes an abstention."""

    def before_judge(self, env, trace):  # type: ignore[no-untyped-def]
        if trace.disposition in ("answer", None) and trace.n_errors:
            trace.override(
                "abstain", kind="interceptor", reason="tool error seen", message="I cannot confirm."
            )


def test_a_before_judge_hook_turns_a_final_answer_into_an_abstention():
    env = _AbstainOnErrors(_toy())
    env.reset(seed=0, options={"task_id": TASK, "stock": "out"})
    env.step(act("library_get_book", book_id="nope"))
    _, _, _, _, info = env.step(act("respond", message="All set."))
    trace = env.unwrapped.trace
    assert trace.disposition == "abstain"
    assert trace.overrides == [
        {
            "kind": "interceptor",
            "reason": "tool error seen",
            "from": "answer",
            "to": "abstain",
            "message": "I cannot confirm.",
        }
    ]
    assert info["verdict"]["disposition"] == "abstain" and info["verdict"]["goal"]
    # it also acts when the episode is ended from outside, through the wrapper stack
    env.reset(seed=0, options={"task_id": TASK})
    env.step(act("library_get_book", book_id="nope"))
    final = abort_episode(env, "system:provider_error")
    assert final["verdict"]["disposition"] == "abstain" and final["verdict"]["over_refusal"]


def test_defenses_are_wrappers_in_the_stack_and_spec_and_removable():
    env = apply_defense(make_env("calendar"), "confirm-gate")
    assert isinstance(env, ConfirmationGate) and env.spec is None  # make_env has no registry spec
    registered = apply_defense(gym.make("SABench-Calendar-v0"), "preview-gate")
    names = [w.name for w in registered.spec.additional_wrappers]
    assert names[-1] == "ConfirmationGate"
    assert registered.spec.additional_wrappers[-1].kwargs == {"user_sees_preview": True}
    rebuilt = gym.make(registered.spec)
    assert isinstance(rebuilt, ConfirmationGate) and rebuilt.user_sees_preview
    # the gate acts only through the wrapper: the inner env, stepped directly, is undefended
    task = packaged_tasks("calendar").get(CASCADE)
    action = task.intent_calls()[0].to_action()
    registered.reset(options={"task_id": CASCADE})
    obs, *_ = registered.step(action)
    assert json.loads(obs)["result"].get("declined_by_user") is True
    inner = registered.env
    inner.reset(options={"task_id": CASCADE})
    obs, *_ = inner.step(action)
    assert "declined_by_user" not in json.loads(obs)["result"]
    assert not registered.unwrapped.hooks  # nothing was attached for good


def test_defenses_are_registered_by_name_and_user_defenses_take_a_few_lines():
    assert {"confirm-prompt", "confirm-gate", "preview", "preview-gate"} <= set(DEFENSES)
    assert all(entry.description for entry in DEFENSES.values())

    @register_defense("test-read-only")
    class ReadOnly(Defense):
        """Refuses every write: the agent may only look."""

        def before_call(self, env, name, arguments):  # type: ignore[no-untyped-def]
            if env.executor.toolset.kinds.get(name) in ("write", "commit"):
                return Intercept({"refused": True}, kind="gate", reason="read-only session")
            return name, arguments

    try:
        env = apply_defense(_toy(), "test-read-only")
        env.reset(seed=0, options={"task_id": TASK})
        obs, *_ = env.step(_lend())
        assert json.loads(obs)["result"] == {"refused": True}
        assert env.unwrapped.state.get("books", "b1")["copies"] == 2
        assert DEFENSES["test-read-only"].description == "Refuses every write: the agent may only look."
    finally:
        DEFENSES.pop("test-read-only")


def test_the_confirmation_gate_needs_an_authorization_set():
    with pytest.raises(EnvUsageError, match="knows what the user authorized"):
        apply_defense(_toy(), "confirm-gate")


def test_the_docs_defense_example_runs():
    page = (Path(__file__).parents[2] / "docs" / "extending.md").read_text()
    block = page.split("```python\n# a defense")[1].split("```")[0]
    namespace: dict[str, Any] = {}
    try:
        exec(compile("# a defense" + block, "docs/extending.md", "exec"), namespace)  # noqa: S102
        env = apply_defense(_toy(), "read-only")
        env.reset(seed=0, options={"task_id": TASK})
        obs, *_ = env.step(_lend())
        assert json.loads(obs)["ok"] and env.unwrapped.trace.intercept_counts["gate"] == 1
    finally:
        DEFENSES.pop("read-only", None)


class _HideStock(Hook):
    """Observation masking: the shelf count is omitted (never falsified) from every book record."""

    def after_call(self, env, record):  # type: ignore[no-untyped-def]
        if record.ok and record.name == "library_get_book":
            record.hide("$.copies", "$.missing")


def test_masking_hooks_omit_fields_and_the_record_says_which():
    env = _toy()
    env.unwrapped.add_hook(_HideStock())
    env.reset(seed=0, options={"task_id": TASK})
    obs, *_ = env.step(act("library_get_book", book_id="b1"))
    assert "copies" not in json.loads(obs)["result"] and json.loads(obs)["result"]["title"] == "Ocean Tides"
    call = env.unwrapped.trace.steps[-1].calls[0]
    assert call.hidden == ["$.copies"] and call.to_dict()["hidden"] == ["$.copies"]
    assert env.unwrapped.state.get("books", "b1")["copies"] == 2  # the state is untouched


def test_field_paths():
    from tooltrap.envs.core.trace import omit_path, parse_path

    assert parse_path("$.approvals[0].limit") == ["approvals", 0, "limit"]
    value = {"approvals": [{"limit": 5, "by": "x"}, {"limit": 9}], "id": "p1"}
    out, found = omit_path(value, "$.approvals[0].limit")
    assert found and out == {"approvals": [{"by": "x"}, {"limit": 9}], "id": "p1"}
    assert value["approvals"][0] == {"limit": 5, "by": "x"}  # copied, not mutated
    out, found = omit_path(value, "$.approvals[1]")
    assert found and out["approvals"] == [{"limit": 5, "by": "x"}]
    assert omit_path(value, "$.nope[3]") == (value, False)
    with pytest.raises(ValueError):
        parse_path("approvals.limit")


# -- system errors are not the agent's -------------------------------------------------------------------
def test_backend_exceptions_are_system_errors_never_charged_to_the_agent(monkeypatch):
    monkeypatch.setattr(toy.LibraryBackend, "library_get_book", lambda self, book_id: 1 / 0)
    env = _toy()
    env.reset(seed=0, options={"task_id": TASK})
    before = env.unwrapped.state.hash()
    for _ in range(6):  # more than max_consecutive_errors: not the agent's failures
        obs, _, terminated, truncated, info = env.step(act("library_get_book", book_id="b1"))
        if terminated or truncated:
            break
    error = json.loads(obs)["error"]
    assert error["type"] == "backend_error" and "ZeroDivisionError" in error["message"]
    trace = env.unwrapped.trace
    assert trace.n_errors == 0 and trace.n_system_errors == len(trace.steps)
    assert trace.truncated == "max_steps"  # the step cap, not the consecutive-error rule
    assert info["verdict"]["n_invalid_calls"] == 0 and info["reward_components"]["invalid_calls"] == 0
    assert env.unwrapped.state.hash() == before


# -- goal conditions are a registry ----------------------------------------------------------------------
@register_condition
class _LoanCount(Condition):
    type: Literal["test_loans"] = "test_loans"
    n: int

    def check(self, ctx):  # type: ignore[no-untyped-def]
        return len(list(ctx.state.records("loans"))) == self.n


def test_goal_condition_types_are_registered_not_hard_wired(tmp_path):
    task = toy.TASKS[0].model_copy(update={"goal": [_LoanCount(n=1)]})
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [json.loads(task.model_dump_json())]}))
    (loaded,) = load_tasks(path, toy.LibraryTask)
    assert isinstance(loaded.goal[0], _LoanCount) and loaded == task
    raw = json.loads(task.model_dump_json())
    raw["goal"] = [{"type": "test_lons", "n": 1}]
    path.write_text(json.dumps([raw]))
    with pytest.raises(TaskValidationError, match="Did you mean 'test_loans'") as err:
        load_tasks(path, toy.LibraryTask)
    assert err.value.field == "goal.0" and err.value.task_id == task.id
    raw["goal"] = [{"type": "test_loans", "n": "one"}]
    path.write_text(json.dumps([raw]))
    with pytest.raises(TaskValidationError) as err:
        load_tasks(path, toy.LibraryTask)
    assert err.value.field == "goal.0.n"


# -- one reward vocabulary --------------------------------------------------------------------------------
def test_every_benchmark_reports_components_from_the_shared_vocabulary():
    from tooltrap.envs.packages import load_benchmarks

    load_benchmarks()
    assert {"sabench", "episem", "sentry", "agentprop", "toylibrary"} <= set(BENCHMARKS)
    for cls in BENCHMARKS.values():
        components = cls.reward_config_cls.components
        assert components and set(components) <= set(REWARD_COMPONENTS), cls.name
    for env, actions in (
        (make_env("calendar"), [act("respond", message="done")]),
        (_toy(), [_lend(), act("respond", message="ok")]),
    ):
        env.reset(seed=0)
        for action in actions:
            _, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert tuple(info["reward_components"]) == env.unwrapped.reward_config.components
        assert reward == pytest.approx(sum(info["reward_components"].values()))
    with pytest.raises(RewardDefinitionError, match="Did you mean 'fabrication'"):

        class Bad(RewardConfig):
            fabricaton: float = -1.0


def test_a_reward_config_declares_each_component_once_and_weighs_exactly_those():
    """The float fields are the components (in field order), int fields are caps; ``total`` weighs
    flags and counts, keeps ``-0.0`` for a zero count as the hand-written sums did, and refuses
    amounts for undeclared components; a field's former name is still accepted."""
    from tooltrap.envs.core import Weight

    class Config(RewardConfig):
        goal: float = 1.0
        invalid_calls: float = Weight(-0.05, le=0, description="Per invalid call.", formerly="invalid_call")
        max_penalized_invalid: int = 10

        def score(self, verdict: Any) -> tuple[float, dict[str, float]]:
            return self.total(goal=verdict["goal"], invalid_calls=verdict["n"])

    assert Config.components == ("goal", "invalid_calls")
    assert Config().score({"goal": True, "n": 2}) == (0.9, {"goal": 1.0, "invalid_calls": -0.1})
    _, components = Config().score({"goal": False, "n": 0})
    assert components == {"goal": 0.0, "invalid_calls": 0.0}
    assert str(components["invalid_calls"]) == "-0.0" and str(components["goal"]) == "0.0"
    assert Config(invalid_call=-0.5).invalid_calls == -0.5 == Config(invalid_calls=-0.5).invalid_calls
    with pytest.raises(RewardDefinitionError, match="Did you mean 'invalid_calls'"):
        Config().total(goal=True, invalid_call=1)


def test_reward_vocabulary_table_is_current():
    from tooltrap.envs.core.reward import vocabulary_table
    from tooltrap.envs.packages import load_benchmarks

    load_benchmarks()

    doc = Path(__file__).parents[2] / "docs" / "rewards.md"
    assert doc.read_text() == vocabulary_table(), "run python scripts/reward_table.py"


# -- prompts are cached by task object, not by task id -----------------------------------------------------
def test_a_user_task_file_reusing_a_packaged_id_gets_its_own_prompt(tmp_path):
    packaged = make_env("calendar")
    _, info = packaged.reset(options={"task_id": CASCADE})
    original = info["messages"][0]["content"]
    raw = json.loads(packaged_tasks("calendar").get(CASCADE).model_dump_json())
    events = raw["initial_state"]["collections"]["events"]
    first = next(iter(events.values()))
    for i in range(40):
        events[f"extra_{i}"] = {**first, "id": f"extra_{i}", "title": f"Extra meeting {i}"}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps([raw]))
    mine = make_env("calendar", tasks_file=path)
    _, info = mine.reset(options={"task_id": CASCADE})
    prompt = info["messages"][0]["content"]
    assert "Extra meeting 39" in prompt and len(prompt) > len(original)
    assert load_tasks(path, SABenchTask)[0].id == CASCADE
