"""The scripted assistants of the multi-agent dialogue against the deterministic scripted user, over the
whole SABench corpus (201 tasks, 45 ambiguous): goal after clarification, writes before the answer,
questions asked, unnecessary questions, collateral damage, mean reward; and the cost of a dialogue
episode against the single-agent episode (time ratio, measured in this run).

Usage:
    python scripts/multiagent_baselines.py               # print the table and the time ratio
    python scripts/multiagent_baselines.py --write-docs  # also write the README's table
    python scripts/multiagent_baselines.py --check       # exit 1 when the README's table is stale

Deterministic: the numbers depend on the corpus and the code only (the time ratio is printed, never
written). About a second on one core.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START = "<!-- multiagent-baselines:start (scripts/multiagent_baselines.py --write-docs) -->"
END = "<!-- multiagent-baselines:end -->"
ASSISTANTS = ("gold", "clarify-then-act", "act-first")
#: README columns: (header, metric, how it is shown)
COLUMNS = (
    ("goal after clarification (45 ambiguous)", "goal_after_clarification", "pct"),
    ("writes before the answer (ambiguous)", "writes_before_answer", "pct"),
    ("questions per ambiguous / clear task", ("questions_ambiguous", "questions_clear"), "pair"),
    ("unnecessary questions (156 clear)", "unnecessary_questions", "pct"),
    ("goal (all 201)", "goal", "pct"),
    ("CD (all)", "cd", "pct"),
    ("mean reward", "mean_reward", "signed"),
    ("simulator errors / void", ("simulator_errors", "void"), "count"),
)


def compute() -> dict[str, dict[str, Any]]:
    """Per scripted assistant, the dialogue metrics over the corpus with the scripted user."""
    from tooltrap.envs.multiagent import sabench_dialogue_v0
    from tooltrap.envs.multiagent.base import run_dialogue
    from tooltrap.envs.multiagent.sabench.baselines import make_assistant
    from tooltrap.envs.multiagent.sabench.metrics import dialogue_metrics
    from tooltrap.envs.multiagent.sabench.users import ScriptedUser

    env = sabench_dialogue_v0.parallel_env()
    out = {}
    for name in ASSISTANTS:
        episodes = [
            run_dialogue(
                env, {"assistant": make_assistant(name), "user": ScriptedUser()}, options={"task_index": i}
            )
            for i in range(len(env.inner.tasks))
        ]
        metrics = dialogue_metrics(episodes)
        metrics["mean_reward"] = sum(e["rewards"]["assistant"] for e in episodes) / len(episodes)
        out[name] = metrics
    return out


def _cell(metrics: dict[str, Any], key: Any, how: str) -> str:
    if how == "pct":
        value = metrics[key]
        return "n/a" if value is None else f"{100 * value:.1f}%"
    if how == "signed":
        return f"{metrics[key]:+.3f}"
    first, second = (metrics[k] for k in key)
    if how == "pair":
        return f"{first:.2f} / {second:.2f}"
    return f"{first} / {second}"


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| assistant | " + " | ".join(h for h, _, _ in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for name, metrics in results.items():
        lines.append(f"| {name} | " + " | ".join(_cell(metrics, k, how) for _, k, how in COLUMNS) + " |")
    return "\n".join(lines)


def render(text: str, results: dict[str, dict[str, Any]]) -> str:
    """``text`` (the README) with the section between the markers replaced by the table."""
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"README.md has no {START} ... {END} section.")
    return f"{head}{START}\n{table(results)}\n{END}{tail}"


def time_ratio(repeat: int = 3) -> tuple[float, float, float]:
    """Seconds per episode of the gold assistant with the scripted user in the dialogue, of the gold
    agent in the single-agent env (the same tasks), and their ratio: best of ``repeat`` passes."""
    from tooltrap.agents import make_agent
    from tooltrap.envs.multiagent import sabench_dialogue_v0
    from tooltrap.envs.multiagent.base import run_dialogue
    from tooltrap.envs.multiagent.sabench.baselines import make_assistant
    from tooltrap.envs.multiagent.sabench.users import ScriptedUser
    from tooltrap.envs.sabench import make_env

    dialogue, single = sabench_dialogue_v0.parallel_env(), make_env()
    n = len(single.tasks)

    def play_dialogue() -> None:
        for i in range(n):
            run_dialogue(
                dialogue,
                {"assistant": make_assistant("gold"), "user": ScriptedUser()},
                options={"task_index": i},
            )

    def play_single() -> None:
        agent = make_agent("gold", benchmark="sabench")
        for i in range(n):
            obs, info = single.reset(options={"task_index": i})
            agent.reset(obs, info, task=single.task)
            done = False
            while not done:
                obs, _, terminated, truncated, info = single.step(agent.act(obs, info))
                done = terminated or truncated

    def best(play: Any) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            play()
            times.append((time.perf_counter() - t0) / n)
        return min(times)

    d, s = best(play_dialogue), best(play_single)
    return d, s, d / s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write-docs", action="store_true", help="write the README's table")
    parser.add_argument("--check", action="store_true", help="exit 1 when the README's table is stale")
    parser.add_argument("--no-timing", action="store_true", help="skip the time ratio")
    args = parser.parse_args(argv)
    results = compute()
    print(table(results))
    for name, metrics in results.items():
        print(f"{name}: termination reasons {metrics['termination_reasons']}")
    if not args.no_timing:
        d, s, ratio = time_ratio()
        print(
            f"time per episode: dialogue {1e3 * d:.2f} ms, single-agent {1e3 * s:.2f} ms, ratio {ratio:.2f} "
            "(target <= 2)"
        )
    text = README.read_text(encoding="utf-8")
    rendered = render(text, results)
    if args.write_docs and rendered != text:
        README.write_text(rendered, encoding="utf-8")
        print("wrote the README's multi-agent table")
    if args.check and rendered != text:
        print(
            "README.md's multi-agent table is stale: run python scripts/multiagent_baselines.py --write-docs"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
