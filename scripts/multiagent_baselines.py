"""The scripted baselines of the multi-agent envs, and what a multi-agent episode costs.

* ``sabench_dialogue_v0``: the scripted assistants against the deterministic scripted user, over the
  whole SABench corpus (201 tasks, 45 ambiguous): goal after clarification, writes before the answer,
  questions asked, unnecessary questions, collateral damage, mean reward.
* ``sentry_arena_v0``: the scripted attacker (the scenario's own payload and placement) against
  SentryBench's scripted assistants, over the whole corpus (200 scenarios, 120 attacked), with no gate
  (the single-agent env), the TGCC rule, approve-all, reject-all and escalate-all as the gate: ASR, over-refusal,
  containment, the assistant's and the gate's mean reward.
* the time of a multi-agent episode against the single-agent episode of the same task (ratio, measured
  in this run, never written).

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

try:
    from _docs import Documents
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._docs import Documents

ROOT = Path(__file__).resolve().parent.parent
START = "<!-- multiagent-baselines:start (scripts/multiagent_baselines.py --write-docs) -->"
END = "<!-- multiagent-baselines:end -->"
ARENA_START = "<!-- arena-baselines:start (scripts/multiagent_baselines.py --write-docs) -->"
ARENA_END = "<!-- arena-baselines:end -->"
ARENA_ASSISTANTS = ("careful", "obedient", "cautious", "form-sensitive")
ARENA_GATES = ("none", "tgcc", "approve-all", "reject-all", "escalate-all")
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


def _gate(name: str) -> Any:
    from tooltrap.envs.multiagent.sentry.baselines import ApproveAllGate, EscalateAllGate, RejectAllGate
    from tooltrap.wrappers.defenses import TGCCGatePolicy

    gates = {
        "tgcc": TGCCGatePolicy,
        "approve-all": ApproveAllGate,
        "reject-all": RejectAllGate,
        "escalate-all": EscalateAllGate,
    }
    return gates[name]()


def _single_episode(env: Any, name: str, i: int) -> tuple[float, dict[str, Any]]:
    """The single-agent SentryBench episode of scripted assistant ``name`` on scenario ``i``."""
    from tooltrap.envs.multiagent.sentry.baselines import make_assistant

    agent = make_assistant(name)
    obs, info = env.reset(options={"task_index": i})
    agent.reset(obs, info, task=env.unwrapped.task)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:
            return reward, info["verdict"]


def compute_arena() -> dict[tuple[str, str], dict[str, Any]]:
    """Per (scripted assistant, gate), the arena's outcomes over the corpus with the scripted attacker;
    gate ``none`` is the single-agent env with no defense (approve-all must equal it)."""
    from tooltrap.envs.multiagent import sentry_arena_v0
    from tooltrap.envs.multiagent.base import run_turns
    from tooltrap.envs.multiagent.sentry.baselines import ScenarioAttacker, make_assistant
    from tooltrap.envs.sentry import SentryEnv

    arena, single = sentry_arena_v0.parallel_env(), SentryEnv()
    n = len(single.tasks)
    out = {}
    for name in ARENA_ASSISTANTS:
        for gate in ARENA_GATES:
            rows = []
            for i in range(n):
                if gate == "none":
                    reward, verdict = _single_episode(single, name, i)
                    rows.append((reward, 0.0, verdict))
                    continue
                policies = {
                    "assistant": make_assistant(name),
                    "attacker": ScenarioAttacker(),
                    "gate": _gate(gate),
                }
                rewards, infos = run_turns(arena, policies, options={"task_index": i})
                rows.append((rewards["assistant"], rewards["gate"], infos["assistant"]["verdict"]))
            attacked = [v for _, _, v in rows if v["attacked"]]
            urgent = [v for _, _, v in rows if v["urgent"]]
            out[(name, gate)] = {
                "asr": sum(v["attack_success"] for v in attacked) / len(attacked),
                "n_attacked": len(attacked),
                "over_refusal": sum(v["over_refusal"] for v in urgent) / len(urgent),
                "n_urgent": len(urgent),
                "contained": sum(v["contained"] for v in attacked) / len(attacked),
                "assistant_reward": sum(r for r, _, _ in rows) / n,
                "gate_reward": None if gate == "none" else sum(g for _, g, _ in rows) / n,
            }
    return out


def arena_table(results: dict[tuple[str, str], dict[str, Any]]) -> str:
    from tooltrap.wrappers.eval.table import Table, rate, signed, text

    first = next(iter(results.values()))
    table = Table(
        "arena",
        [text("assistant"), text("gate"), rate(f"ASR ({first['n_attacked']} attacked)"),
         rate(f"over-refusal ({first['n_urgent']} urgent)"), rate("contained"), signed("assistant mean reward"),
         signed("gate mean reward")],
    )  # fmt: skip
    for (name, gate), m in results.items():
        table.add(
            name, gate, m["asr"], m["over_refusal"], m["contained"], m["assistant_reward"],
            "n/a" if m["gate_reward"] is None else m["gate_reward"],
        )  # fmt: skip
    return table.markdown()


def _column(header: str, how: str) -> Any:
    """How a README column is shown: ``pct`` a rate, ``signed`` a mean reward, ``pair`` two means,
    ``count`` two counts."""
    from tooltrap.wrappers.eval.table import count, number, rate, signed

    return {"pct": rate, "signed": signed, "pair": number, "count": count}[how](header)


def _cell(metrics: dict[str, Any], key: Any, how: str) -> Any:
    if how == "pct":
        return "n/a" if metrics[key] is None else metrics[key]
    if how == "signed":
        return metrics[key]
    return tuple(metrics[k] for k in key)


def table(results: dict[str, dict[str, Any]]) -> str:
    from tooltrap.wrappers.eval.table import Table, text

    out = Table("dialogue", [text("assistant"), *(_column(h, how) for h, _, how in COLUMNS)])
    for name, metrics in results.items():
        out.add(name, *(_cell(metrics, k, how) for _, k, how in COLUMNS))
    return out.markdown()


def render(
    docs: Any, results: dict[str, dict[str, Any]], arena: dict[tuple[str, str], dict[str, Any]] | None = None
) -> Any:
    """``docs`` (:class:`scripts._docs.Documents`) with the blocks between the markers replaced by the
    tables, in whichever document holds them (the arena's table computed here when not given)."""
    docs.replace(START, END, table(results))
    docs.replace(ARENA_START, ARENA_END, arena_table(arena if arena is not None else compute_arena()))
    return docs


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


def arena_time_ratio(repeat: int = 3) -> tuple[float, float, float]:
    """Seconds per episode of the careful operator with the scripted attacker and the TGCC-rule gate in
    the arena, of the same operator in the single-agent env under the ``tgcc`` defense (the same
    scenarios), and their ratio: best of ``repeat`` passes."""
    from tooltrap.envs.multiagent import sentry_arena_v0
    from tooltrap.envs.multiagent.base import run_turns
    from tooltrap.envs.multiagent.sentry.baselines import ScenarioAttacker, make_assistant
    from tooltrap.envs.sentry import SentryEnv
    from tooltrap.wrappers.defenses import apply_defense

    arena, single = sentry_arena_v0.parallel_env(), apply_defense(SentryEnv(), "tgcc")
    n = len(arena.main.tasks)

    def play_arena() -> None:
        for i in range(n):
            policies = {
                "assistant": make_assistant("careful"),
                "attacker": ScenarioAttacker(),
                "gate": _gate("tgcc"),
            }
            run_turns(arena, policies, options={"task_index": i})

    def play_single() -> None:
        for i in range(n):
            _single_episode(single, "careful", i)

    def best(play: Any) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            play()
            times.append((time.perf_counter() - t0) / n)
        return min(times)

    a, s = best(play_arena), best(play_single)
    return a, s, a / s


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
    arena = compute_arena()
    print(arena_table(arena))
    if not args.no_timing:
        d, s, ratio = time_ratio()
        print(
            f"time per episode: dialogue {1e3 * d:.2f} ms, single-agent {1e3 * s:.2f} ms, ratio {ratio:.2f} "
            "(target <= 2)"
        )
        a, s, ratio = arena_time_ratio()
        print(
            f"time per episode: arena {1e3 * a:.2f} ms, single-agent with tgcc {1e3 * s:.2f} ms, "
            f"ratio {ratio:.2f} (target <= 2)"
        )
    docs = render(Documents.load(), results, arena)
    stale = [p.relative_to(ROOT).as_posix() for p in docs.changed()]
    if args.write_docs and stale:
        docs.write()
        print(f"wrote the multi-agent tables in {', '.join(stale)}")
    elif args.check and stale:
        print(
            f"the multi-agent tables in {', '.join(stale)} are stale: run python scripts/multiagent_baselines.py "
            "--write-docs"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
