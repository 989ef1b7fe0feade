"""A verifiers environment over any tooltrap env id (the ``verifiers`` extra):
``load_environment(env_id, ...)`` returns a ``verifiers.v1.Env`` whose rollouts play the model's turns
through a fresh tooltrap env and are scored by tooltrap's judge.

    pip install -c constraints.txt -e '.[verifiers]'

    from tooltrap.training.verifiers_env import load_environment
    env = load_environment(ENV_ID, tasks="...", env_kwargs={...}, mitigation=None, max_turns=16)
    # vf-eval's in-process runner, or by hand: async with env.serving(): await env.run_slot(slot, ctx)

Which verifiers API, and why. ``verifiers`` 0.4.0 ships only the v1 stack (``verifiers.v1``): the
package root holds nothing else, and the older ``MultiTurnEnv`` / ``StatefulToolEnv`` / ``Rubric``
classes are gone from it, so this module is a v1 plugin. In v1 an environment is a
``Taskset`` (the data: one :class:`TooltrapTask` per tooltrap task), a ``Harness`` (the program that
talks to the model) and an ``Env`` (here the stock ``SingleAgentEnv``: one agent seat). The model is
reached only through the rollout's interception server (an OpenAI-compatible endpoint that records
every call on the trace and relays it to the configured client: a provider for evals, the trainer's
renderer for prime-rl); tools are normally MCP servers driven by a chat program in a subprocess.
Tooltrap's tools are one in-process gymnasium env per episode, so :class:`TooltrapHarness` is the
in-process loop v1 allows ("a harness may run its loop in-process ... as long as every model call
goes through endpoint + secret"): each turn it asks the model (chat completions with the env's own
tool schemas), turns the reply into an env action the way the TRL paths do
(:func:`~tooltrap.wrappers.formats.parse_completion`: OpenAI ``tool_calls`` first, then calls in
the text; plain text becomes the answer tool's call, malformed tool-call text a parse error that the
judge charges as an invalid call) and sends the env's replies back as tool messages.

Judging. The episode is a :class:`~tooltrap.training.environment.ToolEnvironment` (the TRL
adapter's env holder: the env wrapped in the mitigation, ``_step`` recording the terminal judgment,
:func:`~tooltrap.training.environment.judge_rollout` judging an open episode as it stands, the
benchmark's ``no_answer``), so both integrations judge the same episode alike. The judgment lands in
``trace.info["tooltrap"]`` (``reward``, ``reward_components``, ``verdict``: the judge's record, which
the model never sees); the task's one weighted reward, ``reward``, is the env's episode reward, and
each reward component is a metric (v1 metrics are recorded, never summed: zero weight). An episode
cut off before a terminal call (``max_turns``, the agent's time limit, a verifiers turn or token
limit) is judged as it stands. A provider failure is not the model's: the model call's error
propagates, verifiers records it on the trace as a ``ProviderError`` (``trace.ok`` False, no reward
scored), and the episode is not judged.

Nothing privileged reaches the model: the prompt is the env's reset messages for the task (the
default variant's, as :func:`~tooltrap.training.data.task_rows` builds them) and the tools its
schemas; the episode variant, the world label and the gold stay with the env and its judge.

Discovery. v1 finds a taskset by importing a module named after its id (``--env.taskset.id X``
imports ``X``; a dotted id does not resolve), so ``vf-eval`` and prime-rl's env servers can name
only a top-level package, which tooltrap does not ship. :func:`load_environment` registers this
module under the id :data:`TASKSET_ID` in the running process (so verifiers' own loaders, which every
construction goes through, find it) and builds the ``Env``; use it from Python.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from functools import cache
from typing import Any

from tooltrap.envs.core import MAX_ACTION_CHARS, EnvUsageError
from tooltrap.envs.packages import DEFAULT_ENV_ID, check_env_id
from tooltrap.wrappers.formats import message_text, parse_completion_format

from .data import task_rows
from .environment import ToolEnvironment, env_parameters, judge_rollout, reward_components

try:
    import verifiers.v1 as vf
    from openai import APIError, AsyncOpenAI
    from pydantic import Field
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise EnvUsageError(
        "tooltrap.training.verifiers_env needs the verifiers package: "
        "pip install -c constraints.txt -e '.[verifiers]'"
    ) from exc

__all__ = [
    "TASKSET_ID",
    "TooltrapHarness",
    "TooltrapHarnessConfig",
    "TooltrapTask",
    "TooltrapTaskData",
    "TooltrapTaskset",
    "TooltrapTasksetConfig",
    "judgment",
    "load_environment",
]

#: the taskset id this module answers to in verifiers' loaders (registered by :func:`load_environment`)
TASKSET_ID = "tooltrap-verifiers"
#: the key of the judgment in ``trace.info``
INFO_KEY = "tooltrap"


class TooltrapTaskData(vf.TaskData):
    """One tooltrap task as verifiers carries it on the wire and the trace: the prompt (the env's
    system and user messages), the tool schemas, and what rebuilds the episode (env id, kwargs,
    mitigation, seed, turn limit). ``id`` is the task id, ``name`` its template id."""

    env_id: str
    task_id: str
    tools: list[dict[str, Any]] = Field(default_factory=list)
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    mitigation: str | None = None
    seed: int = 0
    max_turns: int = 16


def judgment(trace: Any) -> dict[str, Any]:
    """The tooltrap judgment of a finished rollout's trace (``reward``, ``reward_components``,
    ``verdict``); raises ``ValueError`` when the episode was never judged (it did not run, or a
    provider error ended it)."""
    found = trace.info.get(INFO_KEY)
    if not isinstance(found, Mapping):
        raise ValueError("the tooltrap episode of this rollout was not judged (it never ran to an end)")
    return dict(found)


class TooltrapTask(vf.Task[TooltrapTaskData, vf.State]):
    """A tooltrap task: its score is the judge's (the env's episode reward, weight 1) and each reward
    component is a metric."""

    @property
    def key(self) -> str:
        # the task id is durable and unique within an env id; the content hash would change with idx
        return f"{self.data.env_id}/{self.data.task_id}"

    @vf.reward(weight=1.0)
    async def reward(self, trace: Any) -> float:
        """The env's episode reward (the sum of its reward components)."""
        return float(judgment(trace)["reward"])

    @vf.metric
    async def reward_components(self, trace: Any) -> dict[str, float]:
        """Each reward component of the benchmark (goal, collateral, ...), recorded unweighted."""
        return {name: float(value) for name, value in judgment(trace)["reward_components"].items()}


class TooltrapTasksetConfig(vf.TasksetConfig):
    """Which tooltrap tasks load (``--env.taskset.*``): the env id, a task filter as
    ``tooltrap eval --tasks`` takes it, the env's kwargs, a mitigation, the seed of each episode's
    reset and the turn limit of a rollout."""

    env_id: str = DEFAULT_ENV_ID
    tasks: str | None = None
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    mitigation: str | None = None
    seed: int = 0
    max_turns: int = Field(16, ge=1)


class TooltrapTaskset(vf.Taskset[TooltrapTask, TooltrapTasksetConfig]):
    """One task per tooltrap task of the env id (in the env's order), built with
    :func:`~tooltrap.training.data.task_rows`."""

    def __init__(self, config: TooltrapTasksetConfig) -> None:
        super().__init__(config)
        self._rows: list[dict[str, Any]] | None = None

    def rows(self) -> list[dict[str, Any]]:
        """The task rows (prompt, tools, ids), built once."""
        if self._rows is None:
            self._rows = task_rows(
                self.config.env_id, tasks=self.config.tasks, env_kwargs=self.config.env_kwargs
            )
        return self._rows

    def load(self) -> list[TooltrapTask]:
        return [
            TooltrapTask(
                TooltrapTaskData(
                    id=row["task_id"],
                    name=row["template_id"],
                    prompt=row["prompt"],
                    env_id=self.config.env_id,
                    task_id=row["task_id"],
                    tools=json.loads(row["tools"]),
                    env_kwargs=self.config.env_kwargs,
                    mitigation=self.config.mitigation,
                    seed=self.config.seed,
                    max_turns=self.config.max_turns,
                ),
                self.config.task,
            )
            for row in self.rows()
        ]


class TooltrapHarnessConfig(vf.HarnessConfig):
    """The tooltrap harness's knobs (``--env.agent.harness.*``): verifiers' own."""


@cache
def _episode_class(env_id: str, env_kwargs_json: str, mitigation: str | None) -> type[ToolEnvironment]:
    """The TRL adapter's env holder for one (env id, kwargs, mitigation), without tool methods: only
    its env handling is used here."""
    return type(
        "TooltrapEpisode",
        (ToolEnvironment,),
        {
            "env_id": env_id,
            "env_kwargs": json.loads(env_kwargs_json),
            "mitigation": mitigation,
            "components": reward_components(env_id, json.loads(env_kwargs_json)),
        },
    )


def _open_episode(data: TooltrapTaskData) -> ToolEnvironment:
    cls = _episode_class(data.env_id, json.dumps(data.env_kwargs, sort_keys=True), data.mitigation)
    episode = cls()
    episode.reset(task_id=data.task_id, seed=data.seed)
    return episode


def _wire(message: Any) -> dict[str, Any]:
    """A chat message as the chat-completions API takes it (verifiers' message models or dicts)."""
    if isinstance(message, dict):
        return dict(message)
    if isinstance(message, vf.AssistantMessage):
        out: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
        return out
    return message.model_dump(exclude_none=True)


def _replies(
    model_turn: dict[str, Any], env_messages: list[dict[str, Any]], observation: str
) -> list[dict[str, Any]]:
    """The env's answer to a model turn as chat messages: one tool message per tool call of the turn
    (under the model's call ids, in order), or the env's own feedback message (a parse error) for a
    turn whose text held no call."""
    calls = model_turn.get("tool_calls") or []
    if not calls:
        # the env's step messages are [its view of the action, its feedback]: send the feedback
        return [m for m in env_messages if m.get("role") != "assistant"] or [
            {"role": "user", "content": observation}
        ]
    results = [m for m in env_messages if m.get("role") == "tool"]
    if len(results) != len(calls):
        # some calls did not parse as calls (no name): every call of the turn gets the step's feedback
        results = [{"content": observation}] * len(calls)
    return [
        {"role": "tool", "tool_call_id": call["id"], "content": str(result.get("content", ""))}
        for call, result in zip(calls, results, strict=True)
    ]


def _prompt_messages(data: TooltrapTaskData) -> list[dict[str, Any]]:
    """The conversation's opening messages (the prompt verifiers hands the harness, after its request
    hooks), with the task's system prompt first when it is given apart."""
    if isinstance(data.prompt, str):
        messages = [{"role": "user", "content": data.prompt}]
    else:
        messages = [_wire(m) for m in data.prompt or []]
    if data.system_prompt and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": data.system_prompt})
    return messages


def _action(turn: dict[str, Any], answer: Any) -> str:
    """The env action of a model turn, parsed as the TRL paths parse a completion (OpenAI tool calls,
    then calls in the text, then plain text as the answer). The parsing cost is bounded like the env
    bounds an action: text past the env's action limit is cut (it could only be a too-long action),
    and tool calls larger than the limit go to the env as their over-long text, which it rejects."""
    calls = turn.get("tool_calls") or []
    if calls:
        encoded = json.dumps(calls, ensure_ascii=False)
        if len(encoded) > MAX_ACTION_CHARS:
            return encoded[: MAX_ACTION_CHARS + 1]
    text = message_text(turn.get("content"))[: MAX_ACTION_CHARS + 1]
    return parse_completion_format(dict(turn, content=text), answer=answer)[0]


class TooltrapHarness(vf.Harness[TooltrapHarnessConfig]):
    """The in-process agent loop of a tooltrap episode (see the module doc): every model call goes
    through the rollout's interception endpoint; the env runs in this process."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = False
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> Any:
        from verifiers.v1.runtimes import ProgramResult

        if not isinstance(data, TooltrapTaskData):
            raise TypeError(f"the tooltrap harness plays tooltrap tasks, not {type(data).__name__}")
        episode = _open_episode(data)
        messages = _prompt_messages(data)
        client = AsyncOpenAI(base_url=endpoint, api_key=secret)
        provider_failed = False
        try:
            for _ in range(data.max_turns):
                if episode.env.unwrapped.done:
                    break
                try:
                    completion = await client.chat.completions.create(
                        model=ctx.model, messages=messages, tools=data.tools or None
                    )
                except APIError:
                    # a verifiers limit or @stop refused the turn: the episode ends as it stands;
                    # anything else is the provider's failure, which verifiers records (not judged)
                    if trace.stop_condition is not None:
                        break
                    provider_failed = True
                    raise
                reply = completion.choices[0].message.model_dump(exclude_none=True)
                turn = {"role": "assistant", "content": reply.get("content")}
                if reply.get("tool_calls"):
                    turn["tool_calls"] = reply["tool_calls"]
                observation = episode._step(_action(turn, episode._answer))
                messages.append(turn)
                if episode.env.unwrapped.done:
                    break
                messages += _replies(turn, list(episode._last_info.get("messages") or []), observation)
        finally:
            if not provider_failed:
                # finished, cut off (turn limit, time limit: a cancellation lands here) or refused:
                # the episode is judged as it stands
                final = judge_rollout(episode)
                trace.info[INFO_KEY] = {
                    "reward": float(final["reward"]),
                    "reward_components": {k: float(v) for k, v in final["reward_components"].items()},
                    "verdict": final.get("verdict", {}),
                }
            episode.env.close()
            await client.close()
        return ProgramResult(exit_code=0, stdout="", stderr="")


def _episode_kwargs(env_id: str, env_kwargs: Mapping[str, Any], split: str | None) -> dict[str, Any]:
    """The env kwargs of the rows and of every episode: ``split`` added when given, and the env's
    full tool schemas (bounds, defaults) unless the kwargs choose: the schemas travel as JSON to the
    provider, so nothing has to match a chat template's rendering of methods (the TRL case)."""
    accepted = env_parameters(env_id)
    out = dict(env_kwargs)
    if split is not None:
        if accepted is not None and "split" not in accepted:
            raise EnvUsageError(f"{env_id} takes no split (split={split!r}); its kwargs: {sorted(accepted)}")
        out["split"] = split
    if "tool_schemas" not in out and (accepted is None or "tool_schemas" in accepted):
        out["tool_schemas"] = "full"
    return out


def load_environment(
    env_id: str = DEFAULT_ENV_ID,
    *,
    split: str | None = None,
    tasks: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    mitigation: str | None = None,
    max_turns: int = 16,
    seed: int = 0,
) -> vf.Env:
    """A verifiers ``Env`` (``SingleAgentEnv``, one agent seat) over ``env_id``'s tasks.

    Args:
        env_id: Any registered tooltrap env id (``tooltrap list``); an unknown one raises
            ``UnknownNameError`` with a did-you-mean.
        split: The env's ``split`` kwarg (for the envs that take one).
        tasks: Which tasks, as ``tooltrap eval --tasks`` selects them (globs on task or template id,
            ``label=value``); all by default.
        env_kwargs: More kwargs of the env (``state_format``, ``toolset``, ...).
        mitigation: A defense wrapping every episode's env (``tooltrap eval --mitigation``).
        max_turns: Model turns per rollout; an episode still open after them is judged as it stands.
        seed: The seed of every episode's reset.

    The rows are built here, so a bad filter or kwarg raises now, not in a rollout.
    """
    check_env_id(env_id)
    if max_turns < 1:
        raise EnvUsageError(f"max_turns must be at least 1 (got {max_turns})")
    kwargs = _episode_kwargs(env_id, env_kwargs or {}, split)
    # fail now on a bad mitigation name or env kwarg, not inside the first rollout
    _episode_class(env_id, json.dumps(kwargs, sort_keys=True), mitigation)().env.close()
    register()
    config = vf.SingleAgentEnvConfig(
        taskset=TooltrapTasksetConfig(
            id=TASKSET_ID,
            env_id=env_id,
            tasks=tasks,
            env_kwargs=kwargs,
            mitigation=mitigation,
            seed=seed,
            max_turns=max_turns,
        ),
        # the harness runs in this process: the local runtime (verifiers' default is a remote sandbox)
        agent=vf.AgentConfig(runtime=vf.SubprocessConfig()),
    )
    env = vf.SingleAgentEnv(config)
    taskset = env.taskset
    assert isinstance(taskset, TooltrapTaskset)
    taskset.rows()
    return env


def register() -> None:
    """Make this module the taskset (and harness) plugin of the id :data:`TASKSET_ID` in this process:
    verifiers resolves a taskset id by importing the module of that name."""
    module_name = TASKSET_ID.replace("-", "_")
    registered = sys.modules.get(module_name)
    if registered is not None and registered is not sys.modules[__name__]:
        raise EnvUsageError(
            f"another module is already imported as {module_name!r}; tooltrap cannot register"
        )
    sys.modules[module_name] = sys.modules[__name__]
