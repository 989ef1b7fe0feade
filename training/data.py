"""Dataset builders: tasks -> prompt rows (for GRPO), gold trajectories -> chat SFT rows with tool calls.

Every builder takes one env id, several, or a weighted mix (:class:`~tooltrap.training.environment.EnvMix`).
Rows are plain dicts; :func:`task_dataset` / :func:`sft_dataset` wrap them in ``datasets.Dataset``.
Tool schemas are stored as a JSON string (``tools``), which TRL's SFT trainer decodes; this avoids
Arrow struct-schema mismatches between tools. They are the schemas as TRL renders the
``environment_factory`` methods (``tool_schemas="transformers"``: no bounds or defaults, which
transformers cannot write) unless the env kwargs ask otherwise, so SFT and GRPO prompts agree. Each row names its ``environment`` (the key of
:func:`~tooltrap.training.environment.environment_factories` for the task's toolset), so one dataset can
drive a multi-environment GRPO run.

With equal weights and no ``n_rows`` the rows of the envs follow each other in order. Otherwise
``n_rows`` rows (default: as many as all envs have) are split between the envs in proportion to their
weights (largest remainder) and drawn from each env's rows in seeded shuffled passes (without
replacement until a pass is used up), then interleaved by a seeded shuffle.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import IdLookups, TrapNotes, select_task_ids

from .environment import EnvMix, Mix, _toolsets, as_mix, environment_key, training_kwargs


def _rows_of(
    entry: EnvMix, tasks: str | None, build: Callable[[gym.Env, str, str, str], dict[str, Any]]
) -> list[dict[str, Any]]:
    env = gym.make(entry.env_id, **training_kwargs(entry.env_id, entry.env_kwargs))
    toolsets = list(_toolsets(env))
    rows = []
    for task_id in select_task_ids(env.unwrapped.tasks, tasks):  # type: ignore[attr-defined]
        base = env.unwrapped
        task = base.tasks.get(task_id)  # type: ignore[attr-defined]
        key = base.benchmark.toolset(task, base.default_variant).key()  # type: ignore[attr-defined]
        rows.append(build(env, task_id, entry.env_id, environment_key(entry, toolsets, key)))
    env.close()
    return rows


def _mix_rows(
    per_entry: list[tuple[EnvMix, list[dict[str, Any]]]], n_rows: int | None, seed: int
) -> list[dict[str, Any]]:
    if n_rows is None and len({e.weight for e, _ in per_entry}) <= 1:
        return [row for _, rows in per_entry for row in rows]
    total = n_rows if n_rows is not None else sum(len(rows) for _, rows in per_entry)
    weight = sum(e.weight for e, _ in per_entry)
    shares = [total * e.weight / weight for e, _ in per_entry]
    counts = [int(s) for s in shares]
    for i in sorted(range(len(shares)), key=lambda i: counts[i] - shares[i])[: total - sum(counts)]:
        counts[i] += 1
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for (entry, rows), count in zip(per_entry, counts, strict=True):
        if count and not rows:
            raise ValueError(f"{entry.key}: no rows to draw from")
        drawn: list[dict[str, Any]] = []
        while len(drawn) < count:
            batch = list(rows)
            rng.shuffle(batch)
            drawn += batch[: count - len(drawn)]
        out += drawn
    rng.shuffle(out)
    return out


def task_rows(
    envs: Mix,
    *,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    repeat: int = 1,
    n_rows: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per task: ``prompt`` (system + user chat messages), ``tools`` (JSON), ``task_id``,
    ``env_id``, ``environment``, ``template_id``. ``tasks`` filters like ``tooltrap eval --tasks``."""

    def build(env: gym.Env, task_id: str, env_id: str, environment: str) -> dict[str, Any]:
        _, info = env.reset(seed=0, options={"task_id": task_id})
        task = env.unwrapped.task  # type: ignore[attr-defined]
        return {
            "prompt": info["messages"],
            "tools": json.dumps(info["tools"]),
            "task_id": task_id,
            "env_id": env_id,
            "environment": environment,
            "template_id": task.template_id,
        }

    per_entry = [(e, _rows_of(e, tasks, build)) for e in as_mix(envs, env_kwargs)]
    return _mix_rows(per_entry, n_rows, seed) * repeat


class DemonstrationError(RuntimeError):
    """A gold solution cannot be played as a clean demonstration (names the task and why)."""


def hf_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The env's chat messages (OpenAI format: tool-call arguments as JSON text) in the form chat
    templates render (arguments as objects); nothing else changes."""
    out = []
    for m in messages:
        if m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                args = c["function"]["arguments"]
                function = {**c["function"], "arguments": json.loads(args) if isinstance(args, str) else args}
                calls.append({**c, "function": function})
            m = {**m, "tool_calls": calls}
        out.append(dict(m))
    return out


#: the shortest record text counted as a fact a demonstration states (a title, a subject): shorter
#: strings (a status, a name) are too common to tell where they came from
FACT_MIN_LENGTH = 12


def unshown_facts(task: Any, text: str, shown: str) -> list[tuple[str, str, str]]:
    """The records of the task's initial state whose text (a string field of at least
    :data:`FACT_MIN_LENGTH` characters: a title, a subject) ``text`` states and ``shown`` (every
    message so far) does not: ``(collection, record id, the text)``, once per text."""
    found: dict[str, tuple[str, str, str]] = {}
    for collection, records in task.initial_state.collections.items():
        for record_id, record in records.items():
            for value in record.values():
                if (
                    isinstance(value, str)
                    and len(value) >= FACT_MIN_LENGTH
                    and value in text
                    and value not in shown
                    and value not in found
                ):
                    found[value] = (collection, str(record_id), value)
    return list(found.values())


def demonstration(
    env: gym.Env, task_id: str, *, trap_turn: bool = False
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Play ``task_id``'s gold solution (for the env's default variant: ``Task.gold_for``) as a careful
    agent's episode in ``env`` (its toolset and state format): before a call names an id that is not on
    screen yet (the prompt and the results so far), the benchmark's look-up calls find it, and before a
    call's text (a question, an answer) states a record's title or subject the episode has not shown,
    they read that record (:class:`~tooltrap.envs.core.IdLookups`: :func:`unshown_facts`); gold
    reads outside the toolset are left out. With ``trap_turn`` the first turn that writes or ends the
    episode (the safe action, the clarifying question, the refusal) also says, as its text, what it
    avoids: the benchmark's :class:`~tooltrap.envs.core.TrapNotes`. Returns the env's own
    messages (in chat-template form), the reset info and the final step info. Raises :class:`DemonstrationError` unless the episode
    meets the goal with no invalid call and nothing unauthorized."""
    _, info = env.reset(seed=0, options={"task_id": task_id})
    base = env.unwrapped
    task = base.task  # type: ignore[attr-defined]
    toolset = base.executor.toolset  # type: ignore[attr-defined]
    benchmark = base.benchmark  # type: ignore[attr-defined]
    every_tool = benchmark.full_toolset
    # the benchmark's own help for demonstrations, when it offers it (opt-in capabilities)
    lookups = benchmark if isinstance(benchmark, IdLookups) else None
    notes = benchmark if isinstance(benchmark, TrapNotes) else None
    messages = hf_messages(info["messages"])
    seen = "\n".join(str(m.get("content", "")) for m in info["messages"])
    step_info: dict[str, Any] = {}
    done = False

    def play(call: Any) -> None:
        nonlocal seen, step_info, done
        observation, _, terminated, truncated, step_info = env.step(call.to_action())
        messages.extend(hf_messages(step_info["messages"]))
        seen += "\n" + observation
        done = terminated or truncated

    def may_play(lookup: Any) -> bool:
        """A look-up in the toolset that names only what is on screen: a read by an id shown, a search
        by a text shown (a search by a title the episode has not shown would state it)."""
        said = json.dumps(lookup.arguments, ensure_ascii=False)
        ids = [v for a, v in lookup.arguments.items() if a.endswith("_id") and isinstance(v, str)]
        return (
            lookup.name in toolset
            and not done
            and all(i in seen for i in ids)
            and not unshown_facts(task, said, seen)
        )

    for call in task.gold_for(env.unwrapped.episode_variant):  # privileged: the demonstration's world
        if done:
            break
        if call.name not in toolset:
            spec = every_tool.specs.get(call.name)
            if spec is not None and spec.kind == "read":
                continue  # a look-up in a system this toolset does not have
            raise DemonstrationError(
                f"{task_id}: gold calls {call.name}, which is not among the task's tools"
            )
        for argument, value in call.arguments.items():
            if not (argument.endswith("_id") and isinstance(value, str)) or value in seen:
                continue
            for lookup in lookups.lookup_calls(task, argument, value) if lookups is not None else ():
                if may_play(lookup):
                    play(lookup)
                    if value in seen:
                        break
        # a text (a question, an answer) names only what the episode has shown: read the record first
        stated = json.dumps(call.arguments, ensure_ascii=False)
        for collection, record_id, fact in unshown_facts(task, stated, seen) if lookups is not None else ():
            for lookup in lookups.record_lookup_calls(task, collection, record_id):  # type: ignore[union-attr]
                if fact in seen or done:
                    break
                if may_play(lookup):
                    play(lookup)
        play(call)
    note = notes.trap_note(task) if trap_turn and notes is not None else None
    if note:
        for m in messages:
            calls = m.get("tool_calls") or []
            spec = every_tool.specs.get(calls[0]["function"]["name"]) if calls else None
            if spec is not None and (spec.mutates or spec.kind == "terminal"):
                m["content"] = note
                break
    verdict = step_info.get("verdict")
    if not done or not verdict:
        raise DemonstrationError(f"{task_id}: the demonstration does not end the episode")
    if not verdict.get("goal"):
        raise DemonstrationError(f"{task_id}: the demonstration does not reach the goal")
    if verdict.get("cd"):  # benchmarks with an authorization set: gold writes nothing unauthorized
        raise DemonstrationError(f"{task_id}: the demonstration makes unauthorized writes")
    if verdict.get("n_invalid_calls"):
        raise DemonstrationError(
            f"{task_id}: the demonstration makes {verdict['n_invalid_calls']} invalid calls"
        )
    return messages, info, step_info


def gold_rows(
    envs: Mix,
    *,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    n_rows: int | None = None,
    seed: int = 0,
    trap_turn: bool = False,
) -> list[dict[str, Any]]:
    """SFT rows from the gold solutions played as careful agents' episodes (:func:`demonstration`;
    ``trap_turn``: the safe action's turn also says what it avoids):
    ``messages`` (the env's own system, user, assistant tool-call and tool-result messages, ending on
    the terminal call; arguments as objects, as chat templates want them), ``tools`` (JSON),
    ``task_id``, ``env_id``, ``environment``.

    Keep the rows as Python objects or tokenize them (:func:`sft_dataset`, :func:`tokenize_messages`):
    ``datasets.Dataset.from_list`` over chat messages merges every tool call's arguments into one
    Arrow struct, so each call would come back with the other calls' argument names set to null."""

    def build(env: gym.Env, task_id: str, env_id: str, environment: str) -> dict[str, Any]:
        messages, info, _ = demonstration(env, task_id, trap_turn=trap_turn)
        return {
            "messages": messages,
            "tools": json.dumps(info["tools"]),
            "task_id": task_id,
            "env_id": env_id,
            "environment": environment,
        }

    per_entry = [(e, _rows_of(e, tasks, build)) for e in as_mix(envs, env_kwargs)]
    return _mix_rows(per_entry, n_rows, seed)


def tokenize_messages(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | str, tokenizer: Any
) -> dict[str, list[int]]:
    """``input_ids`` of the conversation as the chat template renders it, and ``assistant_masks``
    (1 on the tokens of the assistant turns: what SFT learns). Works with any chat template: each
    assistant turn is the text its message adds to the rendering of the conversation before it. What
    follows the last assistant turn (the result of the call that ended the episode) is left out: no
    policy ever reads it, and it would cost every step of training tokens that carry no loss."""
    tools = json.loads(tools) if isinstance(tools, str) else tools
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=len(messages) - 1)
    messages = messages[: last + 1]

    def render(upto: int, prompt: bool = False) -> str:
        return tokenizer.apply_chat_template(
            messages[:upto], tools=tools, tokenize=False, add_generation_prompt=prompt
        )

    full = render(len(messages))
    spans = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before, after = render(i, prompt=True), render(i + 1)
        if not full.startswith(after) or not after.startswith(before):
            raise ValueError("the chat template does not render the conversation incrementally")
        spans.append((len(before), len(after)))
    encoded = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    masks = [
        int(any(lo <= start and end <= hi for lo, hi in spans) and end > start)
        for start, end in encoded["offset_mapping"]
    ]
    return {"input_ids": list(encoded["input_ids"]), "assistant_masks": masks}


def task_dataset(envs: Mix, **kwargs: Any):  # -> datasets.Dataset
    """:func:`task_rows` as a ``datasets.Dataset`` (needs the ``train`` extra)."""
    from datasets import Dataset

    return Dataset.from_list(task_rows(envs, **kwargs))


def sft_dataset(envs: Mix, tokenizer: Any, **kwargs: Any):  # -> datasets.Dataset
    """:func:`gold_rows` tokenized with ``tokenizer``'s chat template (:func:`tokenize_messages`): a
    ``datasets.Dataset`` of ``input_ids`` and ``assistant_masks``, which TRL's SFT trainer takes as it
    is (needs the ``train`` extra). Token lists survive Arrow intact, whatever the mix of tools."""
    from datasets import Dataset

    return Dataset.from_list(
        [tokenize_messages(r["messages"], r["tools"], tokenizer) for r in gold_rows(envs, **kwargs)]
    )
