"""Prompt lengths in tokens per env id, for the default prompts and the compact setting for small models
(``tooltrap.training.environment.COMPACT_PROMPTS``: compact tool schemas, and where the env takes them
only the task's tools, no serialized state, the short system prompt).

Usage: python scripts/prompt_tokens.py [ENV_ID ...] [--tokenizer NAME[,NAME...]] [--tasks GLOB]
       [--limit N] [--json OUT]
       python scripts/prompt_tokens.py --write-docs | --check-docs   (docs/smollm2.md's tables; CI checks)

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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
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

    return _prompt_lengths(task_rows(env_id, tasks=tasks, env_kwargs=env_kwargs)[:limit], tokenizer)


def _prompt_lengths(rows: list[dict[str, Any]], tokenizer: Any) -> list[int]:
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


def rows_of(
    env_id: str, env_kwargs: dict[str, Any], tasks: str | None, limit: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The GRPO prompt rows and the gold demonstrations of ``env_id`` under ``env_kwargs`` (built once,
    counted with each tokenizer)."""
    from tooltrap.training import gold_rows, task_rows
    from tooltrap.training.data import DemonstrationError

    rows = task_rows(env_id, tasks=tasks, env_kwargs=env_kwargs)[:limit]
    try:
        demos = gold_rows(env_id, tasks=",".join(r["task_id"] for r in rows), env_kwargs=env_kwargs)
    except DemonstrationError:
        demos = []
    return rows, demos


def lengths(
    rows: list[dict[str, Any]], demos: list[dict[str, Any]], tokenizer: Any
) -> tuple[list[int], list[int]]:
    """Token counts of the GRPO prompts and the SFT rows (:func:`tooltrap.training.tokenize_messages`)."""
    from tooltrap.training import tokenize_messages

    sft = [len(tokenize_messages(d["messages"], d["tools"], tokenizer)["input_ids"]) for d in demos]
    return _prompt_lengths(rows, tokenizer), sft


def summary(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": statistics.median(values),
        "max": max(values),
        "under_budget": sum(v < BUDGET for v in values),
    }


def _cell(x: dict[str, Any]) -> str:
    if not x["n"]:
        return "no rows"
    return f"{x['median']:g} / {x['max']} ({x['under_budget']} of {x['n']})"


HEADER = (
    f"| env id | setting | GRPO prompt median / max (< {BUDGET}) | SFT row median / max (< {BUDGET}) |\n"
    "|---|---|---|---|"
)


def tables(env_ids: list[str], tokenizers: list[str], tasks: str | None, limit: int | None) -> dict[str, Any]:
    """Per tokenizer, the markdown table (one row per env id and setting) and its numbers; each env id
    and setting's prompts and demonstrations are built once and counted with every tokenizer."""
    import gymnasium as gym

    import tooltrap
    from tooltrap.training.environment import compact_env_kwargs

    gym.register_envs(tooltrap)
    loaded = [load_tokenizer(t) for t in tokenizers]
    out: dict[str, Any] = {name: {"lines": [HEADER], "rows": []} for _, name in loaded}
    for env_id in env_ids:
        for setting, kwargs in (("default", {}), ("compact", compact_env_kwargs(env_id))):
            rows, demos = rows_of(env_id, kwargs, tasks, limit)
            shown = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "as packaged"
            for tokenizer, name in loaded:
                prompts, sft = lengths(rows, demos, tokenizer)
                p, s = summary(prompts), summary(sft)
                out[name]["rows"].append(
                    {"env_id": env_id, "setting": setting, "env_kwargs": kwargs, "prompt": p, "sft": s}
                )
                out[name]["lines"].append(f"| {env_id} | {setting}: {shown} | {_cell(p)} | {_cell(s)} |")
    return out


DOCS = ROOT / "docs" / "smollm2.md"
DOC_TOKENIZERS = ["smollm2", "smollm2-compact"]


def _curve_tasks() -> str:
    """The learning curve's SABench training templates' tasks (scripts/learning_curve.py), as a filter."""
    try:
        import learning_curve
    except ImportError:  # imported as a module of scripts (the tests)
        from scripts import learning_curve
    return ",".join(f"{t}*" for t in learning_curve.BENCHMARKS["sabench"].train_templates)


def doc_tables() -> list[tuple[str, list[str], str | None, int | None]]:
    """The tables docs/smollm2.md shows: (label, env ids, task filter, limit)."""
    return [
        ("first 20 tasks", list(DEFAULT_ENV_IDS), None, 20),
        ("the learning curve's SABench tasks", ["SABench-Ticket-v0"], _curve_tasks(), None),
    ]


def docs_blocks() -> dict[str, str]:
    """Every block of docs/smollm2.md this script measures, by its marker text."""
    blocks: dict[str, str] = {}
    for label, env_ids, tasks, limit in doc_tables():
        for name, table in tables(env_ids, DOC_TOKENIZERS, tasks, limit).items():
            blocks[f"prompt-tokens: {label}, {name}"] = "\n".join(table["lines"])
    return blocks


def sync_docs(check: bool) -> int:
    """Write (or with ``check`` compare) the measured blocks of docs/smollm2.md, each between
    ``<!-- MARKER:start -->`` and ``<!-- MARKER:end -->``; 1 when a block is missing or differs."""
    text = DOCS.read_text()
    stale = []
    for marker, body in docs_blocks().items():
        start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
        if start not in text or end not in text:
            print(f"{DOCS}: no block {start!r} ... {end!r}", file=sys.stderr)
            return 1
        head, rest = text.split(start, 1)
        old, tail = rest.split(end, 1)
        if old.strip("\n") != body:
            stale.append(marker)
        text = f"{head}{start}\n{body}\n{end}{tail}"
    if check:
        for marker in stale:
            print(f"{DOCS}: the block {marker!r} differs from what this script measures now", file=sys.stderr)
        print(f"{DOCS}: {'stale: ' + ', '.join(stale) if stale else 'every measured block agrees'}")
        return 1 if stale else 0
    DOCS.write_text(text)
    print(f"-> {DOCS} ({len(stale)} block(s) changed)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("env_ids", nargs="*", default=list(DEFAULT_ENV_IDS))
    parser.add_argument("--tokenizer", default="auto", help="one or more, comma-separated")
    parser.add_argument("--tasks", default=None, help="task filter (globs on task/template ids)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks per env id")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/smollm2.md's measured tables")
    parser.add_argument("--check-docs", action="store_true", help="exit 1 when they differ from a new count")
    args = parser.parse_args(argv)
    if args.write_docs or args.check_docs:
        return sync_docs(check=args.check_docs)
    out = tables(args.env_ids, args.tokenizer.split(","), args.tasks, args.limit)
    for name, table in out.items():
        print(f"tokens ({name} tokenizer, chat template with tools); budget {BUDGET}")
        print("\n".join(table["lines"]))
    if args.json:
        Path(args.json).write_text(json.dumps({n: t["rows"] for n, t in out.items()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
