"""Prompt lengths in tokens per env id, for the default prompts and the compact setting for small models
(``tooltrap.training.environment.COMPACT_PROMPTS``: compact tool schemas, and where the env takes them
only the task's tools, no serialized state, the short system prompt).

Usage: python scripts/prompt_tokens.py [ENV_ID ...] [--tokenizer smollm2|smollm2-compact|tiny|DIR] [--tasks GLOB]
       [--limit N] [--json OUT]

For each env id (default: one per benchmark) and each setting: the GRPO prompt (system + user turns and
the tool schemas, as the chat template renders them for the first assistant turn) and the SFT row (the
gold demonstration, tool results included, :func:`tooltrap.training.gold_rows`), in tokens: median and
maximum over the tasks, and how many are under 700. The tokenizer is SmolLM2's (the named offline model,
agents/pretrained.py) when its package is installed, else the tiny test model's (built in seconds);
``--tokenizer smollm2-compact`` counts with its compact tool template (each tool one line).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

#: one env id per benchmark; SABench-Ticket-v0 is the learning curve's
DEFAULT_ENV_IDS = ("SABench-Ticket-v0", "EpiSEM-v0", "SentryBench-v0", "AgentProp-v0")
BUDGET = 700


def load_tokenizer(which: str) -> tuple[Any, str]:
    """The tokenizer named by ``which`` (a named offline model such as ``smollm2`` or
    ``smollm2-compact``, ``tiny`` or a folder; ``auto``: SmolLM2 when installed, else tiny) and the
    name it goes by."""
    from transformers import AutoTokenizer

    from tooltrap.agents.pretrained import OFFLINE_MODELS, PretrainedModelMissing, resolve_model

    if which == "auto" or which in OFFLINE_MODELS:
        name = "smollm2" if which == "auto" else which
        try:
            return AutoTokenizer.from_pretrained(resolve_model(name)), name
        except PretrainedModelMissing as err:
            if which != "auto":
                raise
            print(f"({err}; counting with the tiny model's tokenizer)", file=sys.stderr)
            which = "tiny"
    if which == "tiny":
        from tooltrap.training.tiny import build_tiny_model

        folder = build_tiny_model(Path(tempfile.mkdtemp(prefix="tiny-")) / "model")
        return AutoTokenizer.from_pretrained(folder), "tiny"
    return AutoTokenizer.from_pretrained(which), which


def prompt_lengths(
    env_id: str, env_kwargs: dict[str, Any], tokenizer: Any, tasks: str | None, limit: int | None = None
) -> list[int]:
    """Token counts of the GRPO prompts of ``env_id`` under ``env_kwargs`` (system and user turns with
    the tool schemas, as the chat template renders them for the first assistant turn)."""
    from tooltrap.training import task_rows

    rows = task_rows(env_id, tasks=tasks, env_kwargs=env_kwargs)[:limit]
    return [
        len(
            tokenizer.apply_chat_template(
                r["prompt"],
                tools=json.loads(r["tools"]),
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
            )
        )
        for r in rows
    ]


def count(env_id: str, env_kwargs: dict[str, Any], tokenizer: Any, tasks: str | None, limit: int | None):
    """Token counts of the GRPO prompts and the SFT rows of ``env_id`` under ``env_kwargs``."""
    from tooltrap.training import gold_rows, task_rows, tokenize_messages
    from tooltrap.training.data import DemonstrationError

    prompts = prompt_lengths(env_id, env_kwargs, tokenizer, tasks, limit)
    wanted = ",".join(r["task_id"] for r in task_rows(env_id, tasks=tasks, env_kwargs=env_kwargs)[:limit])
    try:
        demos = gold_rows(env_id, tasks=wanted, env_kwargs=env_kwargs)
    except DemonstrationError:
        demos = []
    sft = [len(tokenize_messages(d["messages"], d["tools"], tokenizer)["input_ids"]) for d in demos]
    return prompts, sft


def summary(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": statistics.median(values),
        "max": max(values),
        "under_budget": sum(v < BUDGET for v in values),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("env_ids", nargs="*", default=list(DEFAULT_ENV_IDS))
    parser.add_argument("--tokenizer", default="auto")
    parser.add_argument("--tasks", default=None, help="task filter (globs on task/template ids)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks per env id")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args(argv)

    import gymnasium as gym

    import tooltrap
    from tooltrap.training.environment import compact_env_kwargs

    gym.register_envs(tooltrap)
    tokenizer, name = load_tokenizer(args.tokenizer)
    print(f"tokens ({name} tokenizer, chat template with tools); budget {BUDGET}")
    print(f"| env id | setting | GRPO prompt median / max (< {BUDGET}) | SFT row median / max (< {BUDGET}) |")
    print("|---|---|---|---|")
    out: list[dict[str, Any]] = []
    for env_id in args.env_ids:
        for setting, kwargs in (("default", {}), ("compact", compact_env_kwargs(env_id))):
            prompts, sft = count(env_id, kwargs, tokenizer, args.tasks, args.limit)
            p, s = summary(prompts), summary(sft)
            out.append({"env_id": env_id, "setting": setting, "env_kwargs": kwargs, "prompt": p, "sft": s})

            def cell(x: dict[str, Any]) -> str:
                if not x["n"]:
                    return "no rows"
                return f"{x['median']:g} / {x['max']} ({x['under_budget']} of {x['n']})"

            shown = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "as packaged"
            print(f"| {env_id} | {setting}: {shown} | {cell(p)} | {cell(s)} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"tokenizer": name, "rows": out}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
