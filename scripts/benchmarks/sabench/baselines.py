"""SABench golden digests: the corpus, the prompts and tool schemas, every verdict, reward and reward
component of the 11 scripted runs and of every trap solution, and the report built from those runs.

The engine must stay generic without moving SABench by one byte: ``tests/sabench/test_golden.py``
recomputes these digests and compares them with ``tests/golden/sabench.json`` (taken before the engine
was made generic). A mismatch names the part and the task that changed. History: the ``prompts`` part
was taken again once, when the tool schemas gained declared bounds (issue 8: list and string lengths).
Every part was taken again, deliberately, for issue 9 (SABench fidelity): authorizations name tool,
count and list elements, labels are decided on the initial state, the reward gained ``wrong_answer``,
verdicts gained fields, and 20 templates were re-authored into single scenarios with content goals.
Issues 7 and 8 left every verdict, reward, summary and report digest as it was before issue 7. The
``runs`` and ``traps`` parts were taken again for issue 10: every episode's reward components gained
``no_answer`` (-0.5 when an episode ends without a terminal call); verdicts, summaries, the report
and the headline did not move. Every part but ``summaries`` was taken again for issue 20 (judges right
in both directions): goals name facts compared by meaning (``corpus_tasks``, ``corpus_files``; one
scenario's answer became a number; one template's goal no longer pins the reply's parent message),
verdicts gained ``undone`` and ``n_trace_violations`` (``runs``, ``traps``), the report and headline
gained ``trace_cd`` and ``undone_updates``; every summary of the 11 scripted runs is unchanged. The
``report`` part was taken again for issue 27 (reports readable): runs are named by their folders
(``gold+none``, no longer ``gold``) and every table is rendered by the typed table model (one number
format); no number moved.

Usage: python scripts/baselines.py sabench [--write] [--resamples 10000]
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym

import tooltrap
from tooltrap.wrappers.eval.sabench.report import SCRIPTED_RUNS

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

gym.register_envs(tooltrap)

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "sabench.json"
DATA = Path(__file__).resolve().parents[3] / "envs" / "sabench" / "data"

#: prompt options whose reset messages and tool schemas are digested
PROMPTS = [
    {},
    {"state_format": "compact"},
    {"state_format": "tools_only"},
    {"toolset": "target", "state_format": "tools_only"},
]


def digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _scored(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "verdict": record["verdict"],
        "reward": record["reward"],
        "reward_components": record["reward_components"],
    }


def compute(resamples: int = 10_000, work: Path | None = None) -> dict[str, Any]:
    from tooltrap.agents import make_agent
    from tooltrap.envs.sabench import packaged_tasks
    from tooltrap.envs.sabench.selfcheck import play
    from tooltrap.evaluate import evaluate
    from tooltrap.wrappers.eval.sabench.metrics import episode_arrays, summarize
    from tooltrap.wrappers.eval.sabench.report import build_report, load_runs, to_csv, to_json, to_markdown

    out: dict[str, Any] = {}
    out["corpus_files"] = {p.name: digest(p.read_text(encoding="utf-8")) for p in sorted(DATA.glob("*.json"))}
    out["corpus_tasks"] = {t.id: digest(t.model_dump_json()) for t in packaged_tasks("all")}

    prompts: dict[str, dict[str, str]] = {}
    for options in PROMPTS:
        env = gym.make("SABench-v0", **options)
        key = json.dumps(options, sort_keys=True)
        prompts[key] = {}
        for task in env.unwrapped.tasks:
            _, info = env.reset(seed=0, options={"task_id": task.id})
            prompts[key][task.id] = digest({"messages": info["messages"], "tools": info["tools"]})
        env.close()
    out["prompts"] = prompts

    env = gym.make("SABench-v0")
    traps: dict[str, str] = {}
    for task in env.unwrapped.tasks:
        for trap in task.traps:
            verdict, reward, info = play(env, task.id, trap.calls)
            traps[f"{task.id}/{trap.name}"] = digest(
                {"verdict": info["verdict"], "reward": reward, "reward_components": info["reward_components"]}
            )
    out["traps"] = traps

    work = work or Path(tempfile.mkdtemp(prefix="tooltrap-golden-"))
    runs: dict[str, dict[str, str]] = {}
    summaries: dict[str, str] = {}
    #: goal and CD in % [95% CI] per run: the README's mitigation table (tests/test_readme.py)
    headline: dict[str, dict[str, list[float]]] = {}
    dirs = []
    for agent, mitigation in SCRIPTED_RUNS:
        name = f"{agent}+{mitigation}"
        folder = work / name
        records = evaluate("SABench-v0", make_agent(agent), folder, mitigation=mitigation)
        dirs.append(folder)
        runs[name] = {r["task_id"]: digest(_scored(r)) for r in records}
        arrays = episode_arrays(r["verdict"] for r in records)
        summary = summarize(arrays, n_resamples=resamples, seed=0)
        summaries[name] = digest({k: iv.to_dict() for k, iv in summary.items()})
        headline[name] = {
            m: [
                round(100 * summary[m].value, 1),
                round(100 * summary[m].ci_low, 1),
                round(100 * summary[m].ci_high, 1),
            ]
            for m in ("goal", "cd")
        }
    out["runs"] = runs
    out["summaries"] = summaries
    out["headline"] = headline
    report = build_report(load_runs(dirs), n_resamples=resamples, seed=0)
    out["report"] = {
        "report.md": digest(to_markdown(report)),
        "metrics.csv": digest(to_csv(report)),
        "report.json": digest(json.dumps(to_json(report), indent=1) + "\n"),
    }
    return out


def differences(expected: dict[str, Any], actual: dict[str, Any], limit: int = 20) -> list[str]:
    """Human-readable differences between two digest trees (at most ``limit``)."""
    found: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if len(found) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if key not in b:
                    found.append(f"{path}/{key}: missing now")
                elif key not in a:
                    found.append(f"{path}/{key}: new")
                else:
                    walk(a[key], b[key], f"{path}/{key}")
        elif a != b:
            found.append(f"{path}: {a} -> {b}")

    walk(expected, actual, "")
    return found


def main() -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--write", action="store_true", help="write tests/golden/sabench.json")
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    actual = compute(args.resamples)
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(actual, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {GOLDEN}")
        return 0
    diffs = differences(json.loads(GOLDEN.read_text(encoding="utf-8")), actual)
    for line in diffs:
        print(line)
    print("SABench golden: " + ("identical" if not diffs else f"{len(diffs)}+ differences"))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
