"""A learning curve on CPU: a base model, SFT on careful demonstrations, then GRPO with the env in the
loop, evaluated greedily after each stage on fixed training tasks, held-out instances of the training
templates, and held-out templates, for one or more benchmarks.

Usage: python scripts/learning_curve.py [--model tiny|smollm2|PATH] [--benchmarks sabench,agentprop]
       [--out runs/learning-curve] [--sft-steps 300] [--grpo-steps 40] [--lora-r 16] [--minutes 60]
       [--limit N] [--eval-max-steps N] [--eval-batch 8] [--hidden 128] [--layers 4] [--write-docs]

Every benchmark runs on its compact prompts (``compact_env_kwargs``: compact tool schemas, and for
SABench only the task's tools, the state not shown, the short system prompt), so GRPO goes through
``rollout_func`` (TRL's tool methods cannot carry compact schemas). The subsets (see ``BENCHMARKS``) are
templates whose careful solution is short (one call and the answer, or one ``clarify``): the last task
of every training template is held out (held-out instances); whole templates of the same kinds are held
out (held-out templates). ``--model tiny`` (default) trains a small random Qwen2 in full; a pretrained
model (``smollm2``, a folder) trains LoRA adapters (``--lora-r``, 0 for full fine-tuning), merged after
each stage. The evaluation's ``max_new_tokens`` is set above the longest gold assistant turn in the
model's tokens (printed); it runs through :func:`tooltrap.evaluate.evaluate` (``--eval-batch`` episodes
generated in one batch, each written to ``OUT/eval/STAGE/BENCHMARK/episodes.jsonl`` as it ends;
``--eval-max-steps`` caps an episode's turns). The token counts of the training tasks' GRPO prompts and
SFT rows are printed and recorded.

After each stage: goal rate, the benchmark's unsafe rate (SABench: consequential damage, the verdict's
``cd``; AgentProp: fabrication, ``fabricated``), the well-formed tool-call rate (the share of turns
parsed as a tool call without error) and the mean reward, each with a 95% bootstrap interval over
tasks. Prints the table and each stage's time; with ``--minutes`` a stage that would run past the
budget is stopped early (SFT gets at most half of what the base evaluation leaves, GRPO stops where the
final evaluation would no longer fit) and the JSON says what was cut. Writes ``curve.png`` (reward
against step) and ``curve.json`` (after every stage: a run stopped later keeps what it measured); with
``--write-docs`` the JSON goes to docs/learning_curve.json, from which scripts/readme_tables.py writes
the table of docs/training.md. CI does not run it (half an hour with SmolLM2 on 2 cores);
``tests/test_readme.py`` checks the docs show what the JSON holds, and
``tests/training/test_learning_curve.py`` runs every stage on the tiny model.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

ROOT = Path(__file__).resolve().parent.parent
DOCS_JSON = ROOT / "docs" / "learning_curve.json"
DOCS_PNG = ROOT / "docs" / "learning_curve.png"
SETS = ("train", "held-out instances", "held-out templates")
METRICS = ("goal", "unsafe", "well_formed", "reward")


class Benchmark(NamedTuple):
    """One benchmark of the curve: its env, the templates trained on and held out, how many tasks of a
    template are used, and the verdict boolean counted as its unsafe outcome (a named tuple, not a
    dataclass: scripts/readme_tables.py loads this file without registering it as a module)."""

    env_id: str
    train_templates: tuple[str, ...]
    held_out_templates: tuple[str, ...]
    unsafe: str
    unsafe_name: str
    per_template: int | None = None


BENCHMARKS: dict[str, Benchmark] = {
    # two overreach templates whose careful solution is one update and the answer, two ambiguity
    # templates that need only `clarify`; one more of each kind held out whole
    "sabench": Benchmark(
        env_id="SABench-Ticket-v0",
        train_templates=(
            "tk-overreach-dependent-parent-start",
            "tk-overreach-external-customer-pending",
            "tk-ambiguity-dependent-parent-child",
            "tk-ambiguity-external-customer-tickets",
        ),
        held_out_templates=("tk-overreach-independent-reassign", "tk-ambiguity-cross-tool-linked-pointer"),
        unsafe="cd",
        unsafe_name="CD rate",
    ),
    # single-call templates (one read or one write, then the answer): the shortest careful solutions,
    # and prompts under 700 tokens; a read and a write template of other kinds held out whole. AgentProp
    # templates have up to 222 tasks: the first four of each are used
    "agentprop": Benchmark(
        env_id="AgentProp-v0",
        train_templates=("weather:w_current", "calendar:c_create"),
        held_out_templates=("weather:w_history", "calendar:c_delete"),
        unsafe="fabricated",
        unsafe_name="fabrication rate",
        per_template=4,
    ),
}


def env_kwargs(benchmark: Benchmark) -> dict[str, Any]:
    """The compact prompt kwargs of the benchmark's env."""
    from tooltrap.training.environment import compact_env_kwargs

    return dict(compact_env_kwargs(benchmark.env_id))


def split_tasks(benchmark: Benchmark, limit: int | None = None) -> dict[str, list[str]]:
    """Task ids of the three evaluation sets (the first, ``train``, is also what SFT and GRPO see); at
    most ``limit`` tasks a set."""
    import gymnasium as gym

    import tooltrap

    gym.register_envs(tooltrap)
    env = gym.make(benchmark.env_id, **env_kwargs(benchmark))
    tasks = env.unwrapped.tasks
    env.close()

    def of(template: str) -> list[str]:
        ids = [t.id for t in tasks if t.template_id == template]
        return ids[: benchmark.per_template] if benchmark.per_template else ids

    out: dict[str, list[str]] = {name: [] for name in SETS}
    for template in benchmark.train_templates:
        ids = of(template)
        out["train"] += ids[:-1]
        out["held-out instances"].append(ids[-1])
    for template in benchmark.held_out_templates:
        out["held-out templates"] += of(template)
    if limit:
        out = {name: ids[:limit] for name, ids in out.items()}
    return out


def bootstrap_ci(
    values: Sequence[Any],
    stat: Callable[[Sequence[Any]], float] | None = None,
    seed: int = 0,
    n: int = 2000,
) -> tuple[float, float]:
    """95% percentile bootstrap interval of ``stat`` (default: the mean) over resampled tasks."""
    stat = stat or (lambda xs: sum(xs) / len(xs))
    if not values:
        return (math.nan, math.nan)
    rng = random.Random(seed)
    stats = sorted(stat(rng.choices(list(values), k=len(values))) for _ in range(n))
    return stats[int(0.025 * n)], stats[int(0.975 * n) - 1]


def _pooled(pairs: Sequence[tuple[int, int]]) -> float:
    turns = sum(t for _, t in pairs)
    return sum(f for f, _ in pairs) / turns if turns else 0.0


def evaluate(
    model_dir: Path,
    benchmark: Benchmark,
    sets: dict[str, list[str]],
    max_new_tokens: int,
    run_dir: Path,
    *,
    max_steps: int | None = None,
    concurrency: int = 8,
) -> dict[str, dict[str, Any]]:
    """Greedy episodes of the checkpoint on every set, through :func:`tooltrap.evaluate.evaluate` (the
    episodes written to ``run_dir/episodes.jsonl`` as they end, ``concurrency`` of them generated in one
    batch; ``max_steps`` the episode's turn limit, default the benchmark's). Per set: goal rate, unsafe
    rate (the benchmark's verdict boolean), the share of turns that were a well-formed tool call (pooled
    over turns) and mean reward, each ``{"value", "ci"}`` with a 95% bootstrap interval over tasks."""
    import shutil

    from tooltrap.agents import make_agent
    from tooltrap.evaluate import evaluate as run_eval

    # a fresh folder: the checkpoint of a stage is new each run, and a resumed run would keep the
    # episodes of an older one (the run's identity is the folder's path, not the weights)
    shutil.rmtree(run_dir, ignore_errors=True)
    kwargs = env_kwargs(benchmark) | ({"max_steps": max_steps} if max_steps else {})
    agent = make_agent(f"hf:{model_dir}", max_new_tokens=max_new_tokens)
    ids = [t for s in SETS for t in sets[s]]
    records = run_eval(
        benchmark.env_id, agent, run_dir, tasks=",".join(ids), env_kwargs=kwargs, concurrency=concurrency
    )
    by_task = {r["task_id"]: r for r in records}

    def mean(xs: Sequence[float]) -> float:
        return sum(xs) / len(xs) if xs else math.nan

    out: dict[str, dict[str, Any]] = {}
    for name in SETS:
        chosen = [by_task[t] for t in sets[name]]
        goals = [float(bool(r["verdict"].get("goal"))) for r in chosen]
        unsafe = [float(bool(r["verdict"].get(benchmark.unsafe))) for r in chosen]
        rewards = [float(r["reward"]) for r in chosen]
        formed = [
            (sum(s.get("format") not in (None, "plain_text", "none") and not s.get("error") for s in steps), len(steps))
            for steps in (r["trace"]["steps"] for r in chosen)
        ]  # fmt: skip
        out[name] = {
            "n": len(chosen),
            "goal": {"value": mean(goals), "ci": bootstrap_ci(goals)},
            "unsafe": {"value": mean(unsafe), "ci": bootstrap_ci(unsafe)},
            "well_formed": {"value": _pooled(formed), "ci": bootstrap_ci(formed, _pooled)},
            "reward": {"value": mean(rewards), "ci": bootstrap_ci(rewards)},
        }
    return out


def gold_rows_tokenized(
    benchmarks: dict[str, Benchmark], sets: dict[str, Any], tokenizer: Any
) -> dict[str, list[dict[str, Any]]]:
    """Per benchmark, the gold demonstration of every task of the three sets, tokenized once
    (:func:`tooltrap.training.tokenize_messages`: ``input_ids``, ``assistant_masks``) with its
    ``task_id``: what the token counts measure and, for the training tasks, what SFT learns."""
    from tooltrap.training import gold_rows, tokenize_messages

    out: dict[str, list[dict[str, Any]]] = {}
    for name, bench in benchmarks.items():
        ids = [t for s in SETS for t in sets[name][s]]
        out[name] = [
            {"task_id": row["task_id"], **tokenize_messages(row["messages"], row["tools"], tokenizer)}
            for row in gold_rows(bench.env_id, env_kwargs=env_kwargs(bench), tasks=",".join(ids))
        ]
    return out


def training_rows(rows: dict[str, list[dict[str, Any]]], sets: dict[str, Any]) -> list[dict[str, Any]]:
    """The tokenized demonstrations of every benchmark's training tasks (what SFT learns)."""
    return [
        {"input_ids": r["input_ids"], "assistant_masks": r["assistant_masks"]}
        for name, demos in rows.items()
        for r in demos
        if r["task_id"] in set(sets[name]["train"])
    ]


def gold_token_lengths(rows: dict[str, list[dict[str, Any]]], sets: dict[str, Any]) -> dict[str, Any]:
    """Per benchmark, in the model's tokens: the longest gold assistant turn over all three sets (what
    one generation must fit) and the longest gold completion of the training tasks (every turn after
    the prompt, tool results included: what a GRPO rollout, which plays only training tasks, must fit)."""
    out: dict[str, Any] = {}
    for name, demos in rows.items():
        train = set(sets[name]["train"])
        turn = completion = 0
        for row in demos:
            mask = row["assistant_masks"]
            run = 0
            for m in mask:
                run = run + 1 if m else 0
                turn = max(turn, run)
            if 1 in mask and row["task_id"] in train:
                completion = max(completion, len(mask) - mask.index(1))
        out[name] = {"gold_turn": turn, "gold_completion": completion}
    return out


def prompt_tokens(
    tokenizer: Any,
    benchmarks: dict[str, Benchmark],
    sets: dict[str, Any],
    rows: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """Per benchmark, in the model's tokens, over the training tasks: the GRPO prompts and the SFT rows
    (median, max, how many under 700: :func:`prompt_tokens.summary`)."""
    try:
        import prompt_tokens as counter
    except ImportError:  # imported as a module of scripts (the tests)
        from scripts import prompt_tokens as counter

    out: dict[str, Any] = {}
    for name, bench in benchmarks.items():
        train = set(sets[name]["train"])
        prompts = counter.prompt_lengths(
            bench.env_id, env_kwargs(bench), tokenizer, ",".join(sets[name]["train"])
        )
        sft = [len(r["input_ids"]) for r in rows[name] if r["task_id"] in train]
        out[name] = {"grpo_prompt": counter.summary(prompts), "sft_row": counter.summary(sft)}
    return out


class _Deadline:
    """A trainer callback that stops training at a wall-clock deadline (``time.monotonic()``)."""

    def __new__(cls, deadline: float | None) -> Any:
        from transformers import TrainerCallback

        class Stop(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
                if deadline is not None and time.monotonic() > deadline:
                    control.should_training_stop = True
                return control

        return Stop()


def _peft(lora_r: int) -> Any:
    if not lora_r:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"
    )


def run_sft(
    model_dir: Path,
    tokenizer: Any,
    out: Path,
    rows: list[dict[str, Any]],
    steps: int,
    lr: float,
    lora_r: int = 0,
    deadline: float | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """SFT on ``rows``, the tokenized gold demonstrations of every benchmark's training tasks
    (:func:`training_rows`; loss on the assistant turns, sequence length the longest row's); saves
    ``out/sft`` (LoRA merged). Returns the loss log and the steps done (fewer than ``steps`` when the
    deadline stopped it)."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    from tooltrap.training.sft import cpu_defaults, save_final

    args = SFTConfig(
        output_dir=str(out / "_sft"), max_steps=steps, per_device_train_batch_size=4 if not lora_r else 1,
        gradient_accumulation_steps=1, learning_rate=lr, lr_scheduler_type="cosine", warmup_steps=0.05,
        logging_steps=1 if lora_r else 10, save_strategy="no", report_to="none", bf16=False,
        max_length=max(len(r["input_ids"]) for r in rows), dataloader_pin_memory=False, seed=0,
        gradient_checkpointing=False,
    )  # fmt: skip
    cpu_defaults(args)
    trainer = SFTTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=_peft(lora_r),
        callbacks=[_Deadline(deadline)],
    )
    trainer.train()
    save_final(trainer, tokenizer, str(out / "sft"))
    return [h for h in trainer.state.log_history if "loss" in h], int(trainer.state.global_step)


def combined_rollout(
    benchmarks: dict[str, Benchmark], sets: dict[str, Any]
) -> tuple[Callable[..., Any], list[dict[str, Any]]]:
    """A ``rollout_func`` over several benchmarks (:func:`make_rollout_func` of their mix: each prompt
    played in its own benchmark's env; only the episode reward passed on, their components differ) and
    the training dataset's rows."""
    from tooltrap.training import task_rows
    from tooltrap.training.rollout import make_rollout_func

    mix = {bench.env_id: env_kwargs(bench) for bench in benchmarks.values()}
    dataset = [
        {"prompt": r["prompt"]}
        for name, bench in benchmarks.items()
        for r in task_rows(bench.env_id, env_kwargs=mix[bench.env_id], tasks=",".join(sets[name]["train"]))
    ]
    return make_rollout_func(mix, max_turns=4), dataset


def run_grpo(
    model_dir: Path,
    tokenizer: Any,
    out: Path,
    benchmarks: dict[str, Benchmark],
    sets: dict[str, Any],
    steps: int,
    lr: float,
    *,
    lora_r: int = 0,
    num_generations: int = 8,
    max_completion_length: int = 160,
    deadline: float | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """GRPO with the envs in the loop through ``rollout_func`` on the compact prompts, one prompt's
    group a step; saves ``out/grpo`` (LoRA merged). Returns the reward log and the steps done."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from tooltrap.training.rollout import env_reward
    from tooltrap.training.sft import cpu_defaults, save_final

    rollout, rows = combined_rollout(benchmarks, sets)
    random.Random(0).shuffle(rows)
    args = GRPOConfig(
        output_dir=str(out / "_grpo"), max_steps=steps, learning_rate=lr,
        per_device_train_batch_size=num_generations, num_generations=num_generations,
        max_completion_length=max_completion_length, temperature=1.0, beta=0.0, use_vllm=False, bf16=False,
        logging_steps=1, save_strategy="no", report_to="none", log_completions=False,
        dataloader_pin_memory=False, seed=0, gradient_checkpointing=False,
    )  # fmt: skip
    cpu_defaults(args)
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        processing_class=tokenizer,
        reward_funcs=[env_reward],
        args=args,
        train_dataset=Dataset.from_list(rows),
        rollout_func=rollout,
        peft_config=_peft(lora_r),
        callbacks=[_Deadline(deadline)],
    )
    trainer.train()
    save_final(trainer, tokenizer, str(out / "grpo"))
    return [h for h in trainer.state.log_history if "reward" in h], int(trainer.state.global_step)


def _estimate(m: dict[str, Any], signed: bool = False) -> str:
    lo, hi = m["ci"]
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"{f.format(m['value'])} [{f.format(lo)}, {f.format(hi)}]"


def table(result: dict[str, Any]) -> str:
    """The docs' table: one row per stage, benchmark and set."""
    from tooltrap.wrappers.eval.table import Table, count, text

    out = Table(
        "learning curve",
        [text("stage"), count("steps"), text("benchmark"), text("set"), count("n"), text("goal [95% CI]"),
         text("unsafe rate [95% CI]"), text("well-formed tool-call rate [95% CI]"),
         text("mean reward [95% CI]")],
    )  # fmt: skip
    for stage in result["stages"]:
        for name, evals in stage["eval"].items():
            unsafe_name = result["benchmarks"][name]["unsafe_name"]
            for s in SETS:
                e = evals[s]
                out.add(stage["name"], stage["steps"], name, s, e["n"], _estimate(e["goal"]),
                        f"{unsafe_name}: {_estimate(e['unsafe'])}", _estimate(e["well_formed"]),
                        _estimate(e["reward"], signed=True))  # fmt: skip
    return out.markdown()


def plot(result: dict[str, Any], path: Path) -> None:
    """Reward against the optimizer step: a panel per benchmark, a line per evaluation set (its own
    colour, marker and line style: the held-out sets often lie on each other), the GRPO training reward
    (all benchmarks' prompts), and a dotted line where each stage ends, named at the top."""
    from tooltrap.wrappers.eval.figures import series_style
    from tooltrap.wrappers.eval.report import pyplot

    plt = pyplot()
    stages = result["stages"]
    names = list(result["benchmarks"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names) + 3.3, 4.4), squeeze=False)
    xs = [s["cumulative_steps"] for s in stages]
    grpo = result.get("grpo_log") or []
    for ax, name in zip(axes[0], names, strict=True):
        for i, set_name in enumerate(SETS):
            style = series_style(i)
            ys = [s["eval"][name][set_name]["reward"]["value"] for s in stages]
            ax.plot(xs, ys, color=style.color, marker=style.marker, linestyle=("-", "--", ":")[i % 3],
                    markersize=7 - 1.5 * i, label=f"greedy eval: {set_name}")  # fmt: skip
        if grpo and len(stages) > 2:
            # one prompt's group per step: the raw curve jumps with the task drawn, so show a running mean
            start, window = stages[1]["cumulative_steps"], 8
            rewards = [h["reward"] for h in grpo]
            smooth = [
                sum(rewards[max(0, i - window + 1) : i + 1]) / len(rewards[max(0, i - window + 1) : i + 1])
                for i in range(len(rewards))
            ]
            steps = [start + h["step"] for h in grpo]
            ax.plot(steps, rewards, color="grey", lw=0.6, alpha=0.35, label="GRPO training reward (sampled, per step)")  # fmt: skip
            ax.plot(steps, smooth, color="black", lw=1.2, label=f"GRPO training reward (running mean of {window})")  # fmt: skip
        top = ax.get_ylim()[1]
        for k, s in enumerate(stages):
            ax.axvline(s["cumulative_steps"], color="0.6", lw=0.8, linestyle=":")
            # right-aligned at the last stage so its name stays inside the axes; a line lower per stage,
            # so stages a few steps apart (SFT, then a short GRPO) do not write over each other
            last = s is stages[-1]
            ax.annotate(s["name"], (s["cumulative_steps"], top), xytext=(-3 if last else 3, -3 - 10 * k), fontsize=7,
                        textcoords="offset points", ha="right" if last else "left", va="top", color="0.3")  # fmt: skip
        ax.set_xlabel("optimizer step (SFT, then GRPO)")
        ax.set_ylabel("mean episode reward")
        env_id = result["benchmarks"][name]["env_id"]
        ax.set_title(f"{env_id} subset: base, SFT, GRPO\n{result['model']}", fontsize=8)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def build_parser() -> Any:
    """The script's options."""
    parser = script_parser(__doc__)
    parser.add_argument(
        "--model",
        default="tiny",
        help="tiny (a random Qwen2), smollm2, smollm2-compact (its compact tool template), or a checkpoint folder",
    )
    parser.add_argument(
        "--benchmarks", default="sabench", help=f"comma-separated, of {', '.join(BENCHMARKS)}"
    )
    parser.add_argument("--out", default="runs/learning-curve")
    parser.add_argument("--sft-steps", type=int, default=300)
    parser.add_argument("--grpo-steps", type=int, default=40)
    parser.add_argument(
        "--sft-lr", type=float, default=None, help="default 3e-3 (tiny), 1e-3 (LoRA), 2e-5 (full)"
    )
    parser.add_argument(
        "--grpo-lr", type=float, default=None, help="default 1e-4 (tiny), 5e-5 (LoRA), 5e-6 (full)"
    )
    parser.add_argument("--lora-r", type=int, default=None, help="LoRA rank (default 16 for a pretrained model, 0 = full fine-tuning; the tiny model trains in full)")  # fmt: skip
    parser.add_argument("--num-generations", type=int, default=None, help="GRPO group size (default 8 tiny, 4 pretrained)")  # fmt: skip
    parser.add_argument("--grpo-completion-tokens", type=int, default=None, help="GRPO rollout budget (default: the longest gold completion + 32)")  # fmt: skip
    parser.add_argument("--limit", type=int, default=None, help="at most N tasks a set and benchmark")
    parser.add_argument(
        "--minutes", type=float, default=None, help="stop stages early to finish in this budget"
    )
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=None, help="default: the longest gold assistant turn + 16")  # fmt: skip
    parser.add_argument("--eval-max-steps", type=int, default=None, help="the evaluation episodes' turn limit (default: the benchmark's)")  # fmt: skip
    parser.add_argument("--eval-batch", type=int, default=8, help="evaluation episodes generated in one batch")  # fmt: skip
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument(
        "--replot",
        action="store_true",
        help="redraw curve.png from OUT/curve.json (with --write-docs: docs/learning_curve.png from "
        "docs/learning_curve.json), without training",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tooltrap.training.sft import cpu_defaults

    unknown = [b for b in args.benchmarks.split(",") if b not in BENCHMARKS]
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}: choose from {', '.join(BENCHMARKS)}")
    benchmarks = {b: BENCHMARKS[b] for b in args.benchmarks.split(",")}
    torch.manual_seed(0)
    cpu_defaults(argparse_namespace())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    budget = started + 60 * args.minutes if args.minutes else None
    tiny = args.model == "tiny"
    if tiny:
        from tooltrap.training import build_tiny_model

        base = build_tiny_model(out / "base", hidden_size=args.hidden, layers=args.layers)
        n_params = AutoModelForCausalLM.from_pretrained(base).num_parameters()
        model_name = (
            f"tiny Qwen2, {n_params / 1e6:.1f}M parameters (hidden {args.hidden}, {args.layers} layers)"
        )
    else:
        from tooltrap.agents.pretrained import resolve_model

        base = Path(resolve_model(args.model))
        n_params = AutoModelForCausalLM.from_pretrained(base).num_parameters()
        model_name = f"{args.model}, {n_params / 1e6:.1f}M parameters"
    lora_r = 0 if tiny else (16 if args.lora_r is None else args.lora_r)
    sft_lr = args.sft_lr or (3e-3 if tiny else 1e-3 if lora_r else 2e-5)
    grpo_lr = args.grpo_lr or (1e-4 if tiny else 5e-5 if lora_r else 5e-6)
    generations = args.num_generations or (8 if tiny else 4)
    sets = {name: split_tasks(b, args.limit) for name, b in benchmarks.items()}
    # one tokenizer and one tokenized set of demonstrations serve the token counts and SFT (the
    # checkpoints after SFT and GRPO are saved with this same tokenizer)
    tokenizer = AutoTokenizer.from_pretrained(base)
    demos = gold_rows_tokenized(benchmarks, sets, tokenizer)
    lengths = gold_token_lengths(demos, sets)
    longest_turn = max(v["gold_turn"] for v in lengths.values())
    max_new_tokens = args.max_new_tokens or longest_turn + 16
    longest_completion = max(v["gold_completion"] for v in lengths.values())
    completion = args.grpo_completion_tokens or longest_completion + 32
    print(
        f"longest gold assistant turn: {longest_turn} tokens -> eval max_new_tokens {max_new_tokens}; "
        f"longest gold completion {longest_completion} tokens -> GRPO max_completion_length {completion} "
        f"({json.dumps(lengths)})"
    )
    tokens = prompt_tokens(tokenizer, benchmarks, sets, demos)
    for name, t in tokens.items():
        print(
            f"{name} training tasks, tokens: GRPO prompt median {t['grpo_prompt']['median']} / max "
            f"{t['grpo_prompt']['max']} ({t['grpo_prompt']['under_budget']} of {t['grpo_prompt']['n']} under "
            f"700); SFT row median {t['sft_row']['median']} / max {t['sft_row']['max']} "
            f"({t['sft_row']['under_budget']} of {t['sft_row']['n']} under 700)"
        )
    if max_new_tokens <= longest_turn:
        print(
            f"warning: --max-new-tokens {max_new_tokens} cannot hold the longest gold turn ({longest_turn})"
        )
    result: dict[str, Any] = {
        "model": model_name + (f", LoRA r={lora_r}" if lora_r else ""),
        "benchmarks": {
            name: {
                "env_id": b.env_id,
                "env_kwargs": env_kwargs(b),
                "train_templates": list(b.train_templates),
                "held_out_templates": list(b.held_out_templates),
                "unsafe": b.unsafe,
                "unsafe_name": b.unsafe_name,
                "sets": sets[name],
            }
            for name, b in benchmarks.items()
        },  # fmt: skip
        "gold_tokens": lengths,
        "prompt_tokens": tokens,
        "max_new_tokens": max_new_tokens,
        "grpo_max_completion_length": completion,
        "settings": {
            "sft_lr": sft_lr,
            "grpo_lr": grpo_lr,
            "lora_r": lora_r,
            "num_generations": generations,
            "limit": args.limit,
            "minutes": args.minutes,
            "eval_max_steps": args.eval_max_steps,
            "eval_batch": args.eval_batch,
        },  # fmt: skip
        "stages": [],
        "stage_seconds": {},
        "cut": [],
    }

    def save() -> None:
        """The result so far (each stage's evaluation adds to it): a run stopped later keeps it."""
        (out / "curve.json").write_text(json.dumps(result, indent=1) + "\n")

    def timed(label: str, run: Callable[[], Any]) -> Any:
        t0 = time.monotonic()
        value = run()
        result["stage_seconds"][label] = round(time.monotonic() - t0, 1)
        print(f"[{time.monotonic() - started:6.0f}s] {label}: {result['stage_seconds'][label]} s")
        return value

    def stage(name: str, model_dir: Path, steps: int, cumulative: int) -> None:
        slug = name.lower().replace(" ", "-")
        evals = timed(
            f"eval {name}",
            lambda: {
                b: evaluate(model_dir, bench, sets[b], max_new_tokens, out / "eval" / slug / b,
                            max_steps=args.eval_max_steps, concurrency=args.eval_batch)
                for b, bench in benchmarks.items()
            },
        )  # fmt: skip
        result["stages"].append({"name": name, "steps": steps, "cumulative_steps": cumulative, "eval": evals})
        save()
        print(f"  {name}: " + json.dumps({b: {s: round(e["goal"]["value"], 2) for s, e in v.items()} for b, v in evals.items()}))  # fmt: skip

    stage("base model", base, 0, 0)
    eval_seconds = result["stage_seconds"]["eval base model"]
    sft_deadline = None
    if budget is not None:
        # SFT gets half of what is left after the two evaluations still to come; GRPO the rest
        sft_deadline = time.monotonic() + max(0.0, (budget - time.monotonic() - 2 * eval_seconds) / 2)
    sft_log, sft_steps = timed(
        "SFT",
        lambda: run_sft(
            base, tokenizer, out, training_rows(demos, sets), args.sft_steps, sft_lr, lora_r, sft_deadline
        ),
    )
    result["sft_log"] = sft_log
    if sft_steps < args.sft_steps:
        result["cut"].append(f"SFT stopped at step {sft_steps} of {args.sft_steps} (budget)")
    stage("SFT", out / "sft", sft_steps, sft_steps)
    grpo_deadline = budget - eval_seconds if budget is not None else None
    if grpo_deadline is not None and time.monotonic() > grpo_deadline:
        result["cut"].append(f"GRPO skipped: the budget was spent ({args.grpo_steps} steps asked)")
        result["grpo_log"] = []
    else:
        grpo_log, grpo_steps = timed(
            "GRPO",
            lambda: run_grpo(out / "sft", tokenizer, out, benchmarks, sets, args.grpo_steps, grpo_lr, lora_r=lora_r,
                             num_generations=generations, max_completion_length=completion,
                             deadline=grpo_deadline),
        )  # fmt: skip
        result["grpo_log"] = [
            {"step": h["step"], "reward": h["reward"], "reward_std": h.get("reward_std", math.nan)}
            for h in grpo_log
        ]
        if grpo_steps < args.grpo_steps:
            result["cut"].append(f"GRPO stopped at step {grpo_steps} of {args.grpo_steps} (budget)")
        stage("GRPO from SFT", out / "grpo", grpo_steps, sft_steps + grpo_steps)
    result["seconds"] = round(time.monotonic() - started)
    save()
    plot(result, out / "curve.png")
    print(table(result))
    print("stage times: " + ", ".join(f"{k} {v} s" for k, v in result["stage_seconds"].items()))
    if args.minutes:
        print(f"budget {args.minutes} min; cut: {'; '.join(result['cut']) or 'nothing'}")
    print(f"{result['seconds']} s; {out / 'curve.png'}")
    if args.write_docs:
        DOCS_JSON.write_text(json.dumps(result, indent=1) + "\n")
        plot(result, DOCS_PNG)
        print(f"-> {DOCS_JSON}, {DOCS_PNG}")
    return 0


def argparse_namespace() -> Any:
    """An object with the one training argument :func:`cpu_defaults` reads (to set torch's threads)."""
    import types

    return types.SimpleNamespace(gradient_checkpointing=False)


if __name__ == "__main__":
    raise SystemExit(main())
