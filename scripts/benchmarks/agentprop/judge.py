"""LLM judges over an AgentProp evaluation's answers: the README's judge snippet as a command, which says
what the judges could not do instead of returning a silent None.

Usage: python scripts/judge.py agentprop RUN_DIR --base-url URL --judge MODEL [--judge MODEL ...]
           [--api-key KEY] [--quorum N] [--concurrency 4] [--timeout S] [--max-retries N] [--out ROWS.jsonl]

Reads RUN_DIR/episodes.jsonl (a ``tooltrap eval AgentProp-... --out RUN_DIR`` run), asks the ensemble of
the ``--judge`` models (one OpenAI-compatible server) whether each final answer states the reference's
core fact, and prints how the answers came out (decided, ties, system outcomes by kind), the judge calls
(failed ones by kind) and the agreement of the env's checker, the release's heuristic and the ensemble
(``n`` over the answers both decided, and what each pair left out). ``--out`` writes one JSON line per
answer (:func:`~tooltrap.wrappers.eval.agentprop.judges.rejudge_episodes`' rows).

Exit status: 0 when the judges decided (failed calls are reported on a ``warning:`` line); 3 when every
judge call failed (no LLM verdict at all: the status ``tooltrap eval`` exits with when every episode
ended at the provider); 2 for a usage error (no run folder, a run of another benchmark).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym

import tooltrap
from tooltrap.wrappers.eval.agentprop.judges import (
    JUDGE_CLIENT_DEFAULTS,
    JudgeEnsemble,
    JudgeError,
    JudgeSystemWarning,
    LLMJudge,
    judge_agreements,
    judge_summary,
    judge_warning,
    rejudge_episodes,
)
from tooltrap.wrappers.eval.run import EPISODES, json_line, read_episodes, read_run_info

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

#: as ``tooltrap eval`` when every episode ended at the provider: no result from the model side at all
EXIT_PROVIDER = 3
EXIT_USAGE = 2


def _references(run_dir: Path) -> dict[str, str]:
    """Task id -> reference sentence, from the run's own env (its env kwargs may name a task file).
    Only tooltrap's AgentProp env ids are made: run.json is data, never a module to import."""
    info = read_run_info(run_dir)
    env_id = info.get("env_id", "AgentProp-v0")
    if env_id not in tooltrap.ENV_IDS or not env_id.startswith("AgentProp"):
        raise SystemExit(f"error: {run_dir} is a run of {env_id!r}, not of an AgentProp env id")
    env = gym.make(env_id, **(info.get("env_kwargs") or {}))
    try:
        return {t.id: t.reference_text for t in env.unwrapped.tasks}  # type: ignore[attr-defined]
    finally:
        env.close()


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("run_dir", type=Path, help="a tooltrap eval AgentProp run folder")
    parser.add_argument("--base-url", required=True, help="the judges' server root, with /v1")
    parser.add_argument("--judge", action="append", required=True, help="a judge model (repeat: 3 is usual)")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--quorum", type=int, default=None, help="votes a side needs (default: a majority)")
    parser.add_argument("--concurrency", type=int, default=4, help="answers judged at once")
    parser.add_argument("--timeout", type=float, default=JUDGE_CLIENT_DEFAULTS["timeout"])
    parser.add_argument("--max-retries", type=int, default=JUDGE_CLIENT_DEFAULTS["max_retries"])
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON lines here")
    args = parser.parse_args(argv)

    path = args.run_dir / EPISODES
    if not path.is_file():
        print(f"error: {path} does not exist: give a tooltrap eval run folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        references = _references(args.run_dir)
        options = {"timeout": args.timeout, "max_retries": args.max_retries}
        judges = [LLMJudge(m, args.base_url, api_key=args.api_key, **options) for m in args.judge]
        ensemble = JudgeEnsemble(judges, quorum=args.quorum)
    except (SystemExit, JudgeError) as exc:
        print(str(exc) if isinstance(exc, SystemExit) else f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    records = read_episodes(path)
    print(f"judges: {', '.join(args.judge)} at {args.base_url} (quorum {ensemble.quorum} of {len(judges)})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JudgeSystemWarning)  # said below, on one line of its own
        rows = rejudge_episodes(records, references, ensemble, concurrency=args.concurrency)
    summary = judge_summary(rows)
    system, calls = summary["system_outcomes"], summary["judge_calls"]
    by_kind = ", ".join(f"{k} {n}" for k, n in system["by_kind"].items())
    print(
        f"answers: {summary['n']} of {len(records)} episodes: decided {summary['decided']}, "
        f"no quorum {summary['no_quorum']}, system outcomes {system['n']}"
        + (f" ({by_kind})" if by_kind else "")
    )
    failed = ", ".join(f"{k} {n}" for k, n in calls["by_kind"].items())
    print(f"judge calls: {calls['n']}, failed {calls['failed']}" + (f" ({failed})" if failed else ""))
    print("agreement: pair, n, raw agreement, kappa, left out (undecided; of which system outcomes)")
    for pair, entry in judge_agreements(rows).items():
        left = f"{entry['undecided']}" + (
            f"; system {entry['system_outcomes']['n']}" if "system_outcomes" in entry else ""
        )
        print(
            f"  {pair:<24} {entry['n']:>5} {_cell(entry['raw_agreement']):>7} {_cell(entry['kappa']):>7}  {left}"
        )
    if args.out is not None:
        with args.out.open("w", encoding="utf-8") as fh:
            fh.writelines(json_line(row) for row in rows)
        print(f"rows: {args.out}")
    if calls["failed"]:
        print(f"warning: {judge_warning(summary, ensemble)}", file=sys.stderr)
    if summary["all_failed"]:
        print(
            f"error: every judge call ({calls['n']}) failed: no LLM verdict. Check --base-url and the "
            "judge server, then rerun.",
            file=sys.stderr,
        )
        return EXIT_PROVIDER
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
