"""The ``tooltrap`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SUMMARY = "summary.json"


def _summary(records: list[dict[str, Any]], resamples: int, seed: int) -> dict[str, dict[str, float | int]]:
    from tooltrap.wrappers.eval.sabench import episode_arrays, summarize

    arrays = episode_arrays(r["verdict"] for r in records)
    return {name: iv.to_dict() for name, iv in summarize(arrays, n_resamples=resamples, seed=seed).items()}


def _print_table(title: str, summary: dict[str, dict[str, float | int]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("metric", "value", "95% CI (template bootstrap)", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, s in summary.items():
        value = s["value"]
        if value != value:  # nan: empty denominator
            table.add_row(name, "-", "-", "0")
            continue
        table.add_row(
            name, f"{100 * value:.1f}%", f"[{100 * s['ci_low']:.1f}, {100 * s['ci_high']:.1f}]", str(s["n"])
        )
    Console().print(table)


def cmd_eval(args: argparse.Namespace) -> int:
    import tooltrap  # noqa: F401  (registers env ids)
    from tooltrap.agents import make_agent
    from tooltrap.evaluate import evaluate

    agent_kwargs: dict[str, Any] = {"seed": args.seed} if args.agent == "random" else {}
    if args.agent.startswith("openai:") and args.base_url:
        agent_kwargs["base_url"] = args.base_url
    agent = make_agent(args.agent, **agent_kwargs)
    env_kwargs = parse_env_args(args.env_arg)
    records = evaluate(
        args.env_id,
        agent,
        args.out,
        seed=args.seed,
        tasks=args.tasks,
        env_kwargs=env_kwargs,
        mitigation=args.mitigation,
        concurrency=args.concurrency,
        progress=not args.quiet,
    )
    summary = _summary(records, args.resamples, args.seed)
    (Path(args.out) / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    mean_reward = sum(r["reward"] for r in records) / len(records)
    _print_table(
        f"{args.agent} on {args.env_id}: {len(records)} episodes, mean reward {mean_reward:.3f}", summary
    )
    return 0


def parse_env_args(pairs: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs to env kwargs; values are JSON when they parse (numbers, booleans, lists)."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"error: --env-arg takes KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def cmd_report(args: argparse.Namespace) -> int:
    from tooltrap.wrappers.eval.report import build_report, load_runs, print_terminal, write_report

    names = args.names.split(",") if args.names else None
    if names and len(names) != len(args.dirs):
        print(f"error: --names has {len(names)} names for {len(args.dirs)} runs", file=sys.stderr)
        return 2
    try:
        runs = load_runs(args.dirs, names)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = build_report(runs, n_resamples=args.resamples, seed=args.seed)
    figures = not args.no_figures
    if figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(
                "matplotlib is not installed (pip install 'tooltrap[plot]'): skipping figures",
                file=sys.stderr,
            )
            figures = False
    written = write_report(report, args.out, figures=figures)
    print_terminal(report)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    import tooltrap
    from tooltrap.agents import AGENTS

    print("env ids:", ", ".join(tooltrap.ENV_IDS))
    print("agents: ", ", ".join(AGENTS))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tooltrap", description="Evaluate tool-using agents on tooltrap benchmarks."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="run an agent over a benchmark's tasks and print the report")
    ev.add_argument("env_id", help="e.g. SABench-Calendar-v0")
    ev.add_argument(
        "--agent", default="act-first", help="gold, clarify, act-first, random, hf:CHECKPOINT or openai:MODEL"
    )
    ev.add_argument(
        "--out", required=True, help="output folder (episodes.jsonl, summary.json); reruns resume"
    )
    ev.add_argument("--seed", type=int, default=0, help="episode and bootstrap seed")
    ev.add_argument(
        "--tasks", default=None, help="comma-separated globs on task/template ids, or label=value"
    )
    ev.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    ev.add_argument(
        "--mitigation",
        default="none",
        help="none, confirm-prompt, confirm-gate, preview or preview-gate (see tooltrap.wrappers.defenses)",
    )
    ev.add_argument(
        "--concurrency", type=int, default=1, help="episodes in flight (batched for hf:, threads for openai:)"
    )
    ev.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env kwarg, e.g. tasks_file=my.json or split=test (repeatable)",
    )
    ev.add_argument(
        "--base-url", default=None, help="server root for openai:MODEL agents (default $OPENAI_BASE_URL)"
    )
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.set_defaults(func=cmd_eval)
    rp = sub.add_parser("report", help="the paper's tables and figures for one or more eval folders")
    rp.add_argument("dirs", nargs="+", help="folders written by `tooltrap eval`")
    rp.add_argument(
        "--out", default="report", help="output folder (report.md, report.json, metrics.csv, PNGs)"
    )
    rp.add_argument("--names", default=None, help="comma-separated display names, one per folder")
    rp.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    rp.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    rp.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    rp.set_defaults(func=cmd_report)
    ls = sub.add_parser("list", help="list env ids and agents")
    ls.set_defaults(func=cmd_list)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from tooltrap.envs.core import TooltrapError

    try:
        return args.func(args)
    except TooltrapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
