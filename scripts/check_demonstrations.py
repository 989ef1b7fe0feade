"""Check every SFT demonstration under every env setting (CI runs all of them once; the tests a sample).

For each setting, every gold demonstration, tokenized through ``datasets``, must be token for token the
chat-template rendering of the messages the env itself produces when its calls are replayed; it reaches
the goal with no invalid call and nothing unauthorized (``demonstration()`` raises otherwise); under
tools_only it looks ids up before using them, with the task's tools only. It also counts the
demonstrations that state a record's text (a title, a subject) before any message showed it.

Prints one line per setting; exit status 1 when a check fails.

Usage: python scripts/check_demonstrations.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

#: (env id, env kwargs): the state formats of the whole benchmark, and each target system's own toolset
DEMO_SETTINGS: list[tuple[str, dict[str, Any]]] = [
    ("SABench-v0", {}),
    ("SABench-v0", {"state_format": "compact"}),
    ("SABench-v0", {"state_format": "tools_only"}),
    *[
        (f"SABench-{d}-v0", {"toolset": "target", "state_format": "tools_only"})
        for d in ("Email", "Calendar", "Ticket")
    ],
]


def check_demonstrations(env_id: str, env_kwargs: dict[str, Any], tokenizer: Any) -> dict[str, int]:
    """Replay every demonstration of ``env_id`` under ``env_kwargs`` (raises AssertionError naming the
    task on the first mismatch); the number of rows and of calls that looked an id up first."""
    import gymnasium as gym

    import tooltrap  # noqa: F401  (registers the env ids)
    from tooltrap.training import gold_rows, hf_messages, sft_dataset, tokenize_messages
    from tooltrap.training.environment import training_kwargs

    rows = gold_rows(env_id, env_kwargs=env_kwargs)
    dataset = sft_dataset(env_id, tokenizer, env_kwargs=env_kwargs)
    assert len(dataset) == len(rows) > 60, (len(dataset), len(rows))
    env = gym.make(env_id, **training_kwargs(env_id, env_kwargs))
    looked_up = unshown = 0
    for row, stored in zip(rows, dataset, strict=True):
        task_id = row["task_id"]
        _, info = env.reset(seed=0, options={"task_id": task_id})
        own = list(info["messages"])
        tools = {t["function"]["name"] for t in info["tools"]}
        calls = [c for m in row["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
        for call in calls:
            assert call["function"]["name"] in tools, task_id
            _, _, terminated, _, step = env.step(json.dumps(call["function"]))
            own += step["messages"]
        assert terminated and step["verdict"]["goal"] and step["verdict"]["n_invalid_calls"] == 0, task_id
        assert hf_messages(own) == row["messages"], task_id  # the env's own episode, nothing added or lost
        assert stored == tokenize_messages(hf_messages(own), info["tools"], tokenizer), task_id  # via Arrow
        text = tokenizer.decode(
            [t for t, m in zip(stored["input_ids"], stored["assistant_masks"], strict=True) if m]
        )
        assert "null" not in text and text.count("<tool_call>") == len(calls), task_id
        looked_up += len(calls) - len(env.unwrapped.task.gold)
        unshown += bool(_states_unshown(env.unwrapped.task, row["messages"]))
    if env_kwargs.get("state_format") == "tools_only":
        assert looked_up > 10, f"{env_id}: ids must be found with the read tools, not memorised"
    return {"rows": len(rows), "looked_up": looked_up, "unshown": unshown}


def _states_unshown(task: Any, messages: list[dict[str, Any]]) -> list[str]:
    """The texts of the task's initial records (a title, a subject: :func:`unshown_facts`) that an
    assistant turn of the demonstration states before any message showed them: what a model trained on
    it would learn to write without having read it. Demonstrations read a record before they name it;
    with one system's tools only (``toolset=target``), a title in another system cannot be read."""
    from tooltrap.training.data import unshown_facts

    shown, stated = "", []
    for message in messages:
        text = str(message.get("content") or "") + json.dumps(
            message.get("tool_calls") or [], ensure_ascii=False
        )
        if message["role"] == "assistant":
            stated += [fact for _, _, fact in unshown_facts(task, text, shown) if fact not in stated]
        shown += text
    return stated


def main() -> int:
    script_parser(__doc__).parse_args()
    from transformers import AutoTokenizer

    from tooltrap.training.tiny import build_tiny_model

    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = AutoTokenizer.from_pretrained(build_tiny_model(Path(tmp) / "tiny"))
        for env_id, kwargs in DEMO_SETTINGS:
            start = time.perf_counter()
            try:
                out = check_demonstrations(env_id, kwargs, tokenizer)
            except AssertionError as err:
                failed += 1
                print(f"FAIL {env_id} {kwargs}: {err}")
                continue
            elapsed = time.perf_counter() - start
            print(
                f"ok   {env_id} {kwargs}: {out['rows']} demonstrations, {out['looked_up']} look-ups, "
                f"{out['unshown']} state a record's text no message has shown yet, {elapsed:.1f} s"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
