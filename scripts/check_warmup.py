"""Check that a short SFT teaches the tiny offline model to emit tool calls (CI runs it once).

The tests no longer train for this: they use ``scripted_tool_caller`` (the untrained tiny model with a
generation bias), which takes seconds where this warm-up takes a minute or more on a loaded CPU. What
only training can show is checked here: ``warm_up_tool_caller`` reaches its thresholds on five real
SABench tasks (both renderings of the tools: TRL's and the env's full schemas), and the warmed model,
played as an ``hf:`` agent, makes calls that the env executes.

Prints what it measured; exit status 1 when the model does not open its turns with ``<tool_call>``
(lowest probability under --threshold), when its greedy turn is not a whole call, or when no call
reached the env.

Usage: python scripts/check_warmup.py [--out DIR] [--threshold 0.9]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import tooltrap  # noqa: F401  (registers the env ids)

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

TEMPLATE = "cal-cascade-dependent-cancel-occurrence"  # five calendar tasks with short prompts
TOOLS = ["calendar_list_events", "calendar_cancel_event", "respond", "clarify"]
TOOL_NAME = "calendar_list_events"


def _mini_tasks(path: Path) -> Path:
    """The template's tasks restricted to a few tools, so the tiny model's prompts stay short."""
    from tooltrap.envs.sabench import packaged_tasks

    tasks = packaged_tasks("calendar").select(templates=[TEMPLATE])
    path.write_text(
        json.dumps({"tasks": [json.loads(t.model_dump_json()) | {"tools": TOOLS} for t in tasks]})
    )
    return path


def check(out: Path, threshold: float) -> dict[str, object]:
    """Build, warm up and measure the tiny model under ``out``; the figures and whether each check passed."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tooltrap.agents import make_agent
    from tooltrap.evaluate import evaluate
    from tooltrap.training import task_rows
    from tooltrap.training.tiny import (
        build_tiny_model,
        first_token_probability,
        greedy_emits_call,
        warm_up_tool_caller,
    )

    env_kwargs = {"state_format": "tools_only", "tasks_file": str(_mini_tasks(out / "mini.json"))}
    rows = [
        row
        for schemas in ("transformers", "full")
        for row in task_rows("SABench-v0", env_kwargs={**env_kwargs, "tool_schemas": schemas})
    ]
    start = time.perf_counter()
    tiny = build_tiny_model(out / "tiny")
    warm = warm_up_tool_caller(tiny, out / "warm", rows, tool_name=TOOL_NAME, threshold=threshold)
    warm_up_s = time.perf_counter() - start
    model, tok = AutoModelForCausalLM.from_pretrained(warm).eval(), AutoTokenizer.from_pretrained(warm)
    probability = first_token_probability(model, tok, rows)
    whole_call = greedy_emits_call(model, tok, rows, TOOL_NAME)
    agent = make_agent(f"hf:{warm}", max_new_tokens=48)
    records = evaluate("SABench-v0", agent, out / "run", env_kwargs=env_kwargs, concurrency=5)
    executed = sum(
        call["name"] == TOOL_NAME for r in records for step in r["trace"]["steps"] for call in step["calls"]
    )
    return {
        "rows": len(rows),
        "warm_up_s": round(warm_up_s, 1),
        "lowest_first_token_probability": round(probability, 4),
        "threshold": threshold,
        "greedy_turn_is_a_whole_call": whole_call,
        "episodes": len(records),
        "calls_executed_by_the_env": executed,
        "passed": probability >= threshold and whole_call and executed > 0,
    }


def main() -> int:
    parser = script_parser(__doc__)
    parser.add_argument(
        "--out", type=Path, help="keep the models and the run here (default: a temporary folder)"
    )
    parser.add_argument("--threshold", type=float, default=0.9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        result = check(out, args.threshold)
    print(json.dumps(result))
    if not result["passed"]:
        print("check_warmup: the SFT warm-up did not make the tiny model a tool caller", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
