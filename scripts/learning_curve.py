"""A learning curve on CPU: a small offline model, SFT on careful demonstrations, then GRPO with the env
in the loop, evaluated greedily after each stage on fixed training tasks, held-out instances of the
training templates, and held-out templates.

Usage: python scripts/learning_curve.py [--out runs/learning-curve] [--sft-steps 300] [--grpo-steps 40]
       [--hidden 128] [--layers 4] [--write-docs]

The subset is small enough to learn: SABench-Ticket-v0 with the ticket tools only and the state not
shown (``toolset=target``, ``state_format=tools_only``); two templates whose careful solution is one
update and the answer, and two ambiguity templates that need only ``clarify``. The last task of every
training template is held out (held-out instances); one more template of each kind is held out whole.
Prints the table (stage, steps, goal on the three sets, mean reward, well-formed tool-call rate),
writes ``curve.png`` (reward against step) and ``curve.json``; with ``--write-docs`` the JSON goes to
docs/learning_curve.json, from which scripts/readme_tables.py writes the README's table. CI does not
run it (several minutes); ``tests/test_readme.py`` checks the README shows what the JSON holds.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from pathlib import Path
from typing import Any

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

ROOT = Path(__file__).resolve().parent.parent
DOCS_JSON = ROOT / "docs" / "learning_curve.json"
DOCS_PNG = ROOT / "docs" / "learning_curve.png"
ENV_ID = "SABench-Ticket-v0"
ENV_KWARGS = {"toolset": "target", "state_format": "tools_only"}
TRAIN_TEMPLATES = (
    "tk-overreach-dependent-parent-start",
    "tk-overreach-external-customer-pending",
    "tk-ambiguity-dependent-parent-child",
    "tk-ambiguity-external-customer-tickets",
)
HELD_OUT_TEMPLATES = ("tk-overreach-independent-reassign", "tk-ambiguity-cross-tool-linked-pointer")
SETS = ("train", "held-out instances", "held-out templates")


def split_tasks() -> dict[str, list[str]]:
    """Task ids of the three evaluation sets (and the training tasks, the first set)."""
    import gymnasium as gym

    import tooltrap

    gym.register_envs(tooltrap)
    env = gym.make(ENV_ID, **ENV_KWARGS)
    tasks = env.unwrapped.tasks
    out: dict[str, list[str]] = {name: [] for name in SETS}
    for template in TRAIN_TEMPLATES:
        ids = [t.id for t in tasks if t.template_id == template]
        out["train"] += ids[:-1]
        out["held-out instances"].append(ids[-1])
    for template in HELD_OUT_TEMPLATES:
        out["held-out templates"] += [t.id for t in tasks if t.template_id == template]
    return out


def evaluate(model_dir: Path, task_ids: list[str], max_new_tokens: int) -> dict[str, float]:
    """Greedy episodes of the checkpoint: goal rate, mean reward and the share of turns that were a
    well-formed tool call."""
    import gymnasium as gym

    from tooltrap.agents import make_agent
    from tooltrap.evaluate import run_episode

    env = gym.make(ENV_ID, **ENV_KWARGS, tool_schemas="transformers")
    agent = make_agent(f"hf:{model_dir}", max_new_tokens=max_new_tokens)
    goals, rewards, turns, formed = 0, [], 0, 0
    for task_id in task_ids:
        record = run_episode(env, agent, task_id, seed=0)
        goals += bool(record["verdict"]["goal"])
        rewards.append(float(record["reward"]))
        for step in record["trace"]["steps"]:
            turns += 1
            formed += step.get("format") not in (None, "plain_text", "none") and not step.get("error")
    return {
        "goal": goals / len(task_ids),
        "n": len(task_ids),
        "reward": sum(rewards) / len(rewards),
        "rewards": rewards,
        "well_formed": formed / turns if turns else 0.0,
    }


def bootstrap_mean_ci(values: list[float], seed: int = 0, n: int = 2000) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean (tasks resampled)."""
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(n))
    return means[int(0.025 * n)], means[int(0.975 * n) - 1]


def run_sft(model_dir: Path, out: Path, task_ids: list[str], steps: int, lr: float) -> list[dict[str, Any]]:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from tooltrap.training import gold_rows, tokenize_messages

    tok = AutoTokenizer.from_pretrained(model_dir)
    rows = gold_rows(ENV_ID, env_kwargs=ENV_KWARGS, tasks=",".join(task_ids))
    data = Dataset.from_list([tokenize_messages(r["messages"], r["tools"], tok) for r in rows])
    args = SFTConfig(
        output_dir=str(out / "_sft"), max_steps=steps, per_device_train_batch_size=4, learning_rate=lr,
        lr_scheduler_type="cosine", warmup_steps=0.05, logging_steps=10, save_strategy="no",
        report_to="none", bf16=False, max_length=4096, dataloader_pin_memory=False, seed=0,
    )  # fmt: skip
    trainer = SFTTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        args=args,
        train_dataset=data,
        processing_class=tok,
    )
    trainer.train()
    trainer.model.save_pretrained(out / "sft")
    tok.save_pretrained(out / "sft")
    return [h for h in trainer.state.log_history if "loss" in h]


def run_grpo(model_dir: Path, out: Path, task_ids: list[str], steps: int, lr: float) -> list[dict[str, Any]]:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from tooltrap.training import component_rewards, environment_class, environment_reward, task_rows

    rows = task_rows(ENV_ID, env_kwargs=ENV_KWARGS, tasks=",".join(task_ids))
    env_class = environment_class(ENV_ID, env_kwargs=ENV_KWARGS)
    loggers = component_rewards(env_class)
    args = GRPOConfig(
        output_dir=str(out / "_grpo"), max_steps=steps, learning_rate=lr, per_device_train_batch_size=8,
        num_generations=8, max_completion_length=160, max_tool_calling_iterations=3, temperature=1.0,
        beta=0.0, use_vllm=False, bf16=False, logging_steps=1, save_strategy="no", report_to="none",
        log_completions=False, dataloader_pin_memory=False, seed=0,
        reward_weights=[1.0] + [0.0] * len(loggers),
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        processing_class=AutoTokenizer.from_pretrained(model_dir),
        reward_funcs=[environment_reward, *loggers],
        args=args,
        train_dataset=Dataset.from_list([{"prompt": r["prompt"], "task_id": r["task_id"]} for r in rows]),
        environment_factory=env_class,
    )
    trainer.train()
    trainer.model.save_pretrained(out / "grpo")
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(out / "grpo")
    return [h for h in trainer.state.log_history if "reward" in h]


def table(result: dict[str, Any]) -> str:
    """The README's table: one row per stage."""
    from tooltrap.wrappers.eval.table import Estimate, Table, count, number, signed, text

    out = Table(
        "learning curve",
        [text("stage"), count("steps"), text("goal train / held-out instances / held-out templates"),
         signed("mean reward (train) [95% CI]"), number("well-formed tool-call rate")],
    )  # fmt: skip
    for stage in result["stages"]:
        goals = " / ".join(
            f"{round(stage['eval'][s]['goal'] * stage['eval'][s]['n'])} of {stage['eval'][s]['n']}"
            for s in SETS
        )
        train = stage["eval"]["train"]
        lo, hi = train["reward_ci"]
        out.add(stage["name"], stage["steps"], goals, Estimate(train["reward"], lo, hi), train["well_formed"])
    return out.markdown()


def plot(result: dict[str, Any], path: Path) -> None:
    """Reward against the optimizer step: a line per evaluation set (its own colour, marker and line
    style: the held-out sets often lie on each other), the GRPO training reward, and a dotted line
    where each stage ends, named at the top."""
    from tooltrap.wrappers.eval.figures import series_style
    from tooltrap.wrappers.eval.report import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    stages = result["stages"]
    xs = [s["cumulative_steps"] for s in stages]
    for i, name in enumerate(SETS):
        style = series_style(i)
        ax.plot(xs, [s["eval"][name]["reward"] for s in stages], color=style.color, marker=style.marker,
                linestyle=("-", "--", ":")[i % 3], markersize=7 - 1.5 * i, label=f"greedy eval: {name}")  # fmt: skip
    grpo = result.get("grpo_log") or []
    if grpo:
        # one prompt's group per step: the raw curve jumps with the task drawn, so show a running mean
        start, window = stages[1]["cumulative_steps"], 8
        rewards = [h["reward"] for h in grpo]
        smooth = [
            sum(rewards[max(0, i - window + 1) : i + 1]) / len(rewards[max(0, i - window + 1) : i + 1])
            for i in range(len(rewards))
        ]
        steps = [start + h["step"] for h in grpo]
        ax.plot(
            steps, rewards, color="grey", lw=0.6, alpha=0.35, label="GRPO training reward (sampled, per step)"
        )
        ax.plot(
            steps, smooth, color="black", lw=1.2, label=f"GRPO training reward (running mean of {window})"
        )
    top = ax.get_ylim()[1]
    for k, s in enumerate(stages):
        ax.axvline(s["cumulative_steps"], color="0.6", lw=0.8, linestyle=":")
        # right-aligned at the last stage so its name stays inside the axes; a line lower per stage, so
        # stages a few steps apart (SFT, then a short GRPO) do not write over each other
        last = s is stages[-1]
        ax.annotate(s["name"], (s["cumulative_steps"], top), xytext=(-3 if last else 3, -3 - 10 * k), fontsize=7,
                    textcoords="offset points", ha="right" if last else "left", va="top", color="0.3")  # fmt: skip
    ax.set_xlabel("optimizer step (SFT, then GRPO)")
    ax.set_ylabel("mean episode reward (-1 to 1)")
    ax.set_title(f"{ENV_ID} subset: base, SFT, GRPO\n{result['model']}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--out", default="runs/learning-curve")
    parser.add_argument("--sft-steps", type=int, default=300)
    parser.add_argument("--grpo-steps", type=int, default=40)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--grpo-lr", type=float, default=1e-4)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument(
        "--replot",
        action="store_true",
        help="redraw curve.png from OUT/curve.json (with --write-docs: docs/learning_curve.png from "
        "docs/learning_curve.json), without training",
    )
    args = parser.parse_args()
    if args.replot:
        source, target = (
            (DOCS_JSON, DOCS_PNG)
            if args.write_docs
            else (Path(args.out) / "curve.json", Path(args.out) / "curve.png")
        )
        result = json.loads(source.read_text())
        plot(result, target)
        print(table(result))
        print(f"-> {target}")
        return 0

    import torch
    from transformers import AutoModelForCausalLM

    from tooltrap.training import build_tiny_model

    torch.manual_seed(0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    sets = split_tasks()
    base = build_tiny_model(out / "base", hidden_size=args.hidden, layers=args.layers)
    n_params = AutoModelForCausalLM.from_pretrained(base).num_parameters()
    result: dict[str, Any] = {
        "model": f"tiny Qwen2, {n_params / 1e6:.1f}M parameters (hidden {args.hidden}, {args.layers} layers)",
        "env_id": ENV_ID,
        "env_kwargs": ENV_KWARGS,
        "sets": sets,
        "stages": [],
    }

    def stage(name: str, model_dir: Path, steps: int, cumulative: int) -> None:
        evals = {s: evaluate(model_dir, ids, args.max_new_tokens) for s, ids in sets.items()}
        for e in evals.values():
            e["reward_ci"] = bootstrap_mean_ci(e.pop("rewards"))
        result["stages"].append({"name": name, "steps": steps, "cumulative_steps": cumulative, "eval": evals})
        print(
            f"[{time.monotonic() - started:6.0f}s] {name}: "
            + json.dumps({s: round(e["reward"], 3) for s, e in evals.items()})
        )

    stage("base model", base, 0, 0)
    result["sft_log"] = run_sft(base, out, sets["train"], args.sft_steps, args.sft_lr)
    stage("SFT", out / "sft", args.sft_steps, args.sft_steps)
    result["grpo_log"] = [
        {"step": h["step"], "reward": h["reward"], "reward_std": h.get("reward_std", math.nan)}
        for h in run_grpo(out / "sft", out, sets["train"], args.grpo_steps, args.grpo_lr)
    ]
    stage("GRPO from SFT", out / "grpo", args.grpo_steps, args.sft_steps + args.grpo_steps)
    result["seconds"] = round(time.monotonic() - started)
    (out / "curve.json").write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out / "curve.png")
    print(table(result))
    print(f"{result['seconds']} s; {out / 'curve.png'}")
    if args.write_docs:
        DOCS_JSON.write_text(json.dumps(result, indent=1) + "\n")
        plot(result, DOCS_PNG)
        print(f"-> {DOCS_JSON}, {DOCS_PNG}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
