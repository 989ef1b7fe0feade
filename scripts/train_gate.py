"""Train the gate of ``sentry_arena_v0`` with TRL: the assistant and the attacker are fixed policies
(:class:`~tooltrap.envs.multiagent.single_role.SingleRoleEnv`), the gate learns. SFT on the TGCC rule's
decisions (the teacher's demonstrations, :func:`tooltrap.training.roles.role_rows`), then GRPO with the
arena in the loop (:func:`tooltrap.training.roles.role_reward`: the judge's gate reward, harm averted
minus harm caused). Prints the mean gate reward of the model's greedy decisions before and after, beside
the teacher's and approve-all's.

Usage:
    python scripts/train_gate.py --model MODEL_DIR [--out runs/gate] [--tasks 24] [--sft-steps 4]
        [--grpo-steps 2] [--assistant obedient]
    python scripts/train_gate.py --tiny          # builds the tiny offline model first: CPU, seconds
    python scripts/train_gate.py --config configs/grpo_gate_qwen2.5-0.5b.yaml   # a real run (GPU)

The tiny model learns nothing useful in seconds; the test checks the pipeline runs, end to end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

ENV = "sentry_arena_v0"


def _view(assistant: str) -> Any:
    from tooltrap.envs.multiagent import sentry_arena_v0
    from tooltrap.envs.multiagent.sentry.baselines import ScenarioAttacker, make_assistant
    from tooltrap.envs.multiagent.single_role import SingleRoleEnv

    return SingleRoleEnv(
        sentry_arena_v0.parallel_env(),
        "gate",
        {"assistant": make_assistant(assistant), "attacker": ScenarioAttacker()},
    )


def _greedy_reward(model: Any, tokenizer: Any, rows: list[dict[str, Any]], reward: Any) -> float:
    """Mean gate reward of the model's greedy decision at each row's turn."""
    import torch

    texts = []
    for row in rows:
        ids = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )["input_ids"]
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=tokenizer.eos_token_id)
        texts.append(tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True))
    found = reward(texts, [r["task_index"] for r in rows], [r["turn"] for r in rows])
    return sum(found) / len(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="a causal LM checkpoint folder (with a chat template)")
    parser.add_argument("--tiny", action="store_true", help="build and use the tiny offline model")
    parser.add_argument("--config", help="a YAML file of these options (a GPU run: configs/)")
    parser.add_argument("--out", default="runs/gate")
    parser.add_argument(
        "--assistant", default="obedient", help="the fixed assistant (a SentryBench baseline)"
    )
    parser.add_argument("--tasks", type=int, default=24, help="scenarios (spread over the corpus)")
    parser.add_argument("--sft-steps", type=int, default=4)
    parser.add_argument("--grpo-steps", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--num-generations", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--bf16", action="store_true")
    args = parser.parse_args(argv)
    if args.config:
        import yaml

        options = yaml.safe_load(Path(args.config).read_text(encoding="utf-8")) or {}
        parser.set_defaults(**{k.replace("-", "_"): v for k, v in options.items()})
        args = parser.parse_args(argv)
    if not args.model and not args.tiny:
        parser.error("give --model MODEL_DIR, --tiny or --config FILE")

    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

    from tooltrap.envs.multiagent.sentry_arena_v0 import ROLE_PROMPTS
    from tooltrap.training.roles import role_reward, role_rows
    from tooltrap.wrappers.defenses import TGCCGatePolicy

    out = Path(args.out)
    model_dir = args.model
    if args.tiny:
        from tooltrap.training.tiny import build_tiny_model

        model_dir = str(build_tiny_model(out / "tiny"))
    n = len(_view(args.assistant).env.main.tasks)
    indices = sorted({round(i * (n - 1) / max(args.tasks - 1, 1)) for i in range(args.tasks)})
    rows = role_rows(lambda: _view(args.assistant), TGCCGatePolicy, ROLE_PROMPTS["gate"], indices)
    if not rows:
        print("error: the gate gets no turn on these scenarios", file=sys.stderr)
        return 1
    reward = role_reward(lambda: _view(args.assistant), TGCCGatePolicy)
    teacher = reward(
        [r["completion"] for r in rows], [r["task_index"] for r in rows], [r["turn"] for r in rows]
    )
    approve = reward(["approve"] * len(rows), [r["task_index"] for r in rows], [r["turn"] for r in rows])
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    before = _greedy_reward(model, tokenizer, rows, reward)
    common = {"bf16": args.bf16, "report_to": "none", "save_strategy": "no", "logging_steps": 1}
    sft = SFTTrainer(
        model=model,
        args=SFTConfig(
            output_dir=str(out / "sft"),
            max_steps=args.sft_steps,
            per_device_train_batch_size=args.batch_size,
            learning_rate=args.learning_rate,
            dataloader_num_workers=0,
            **common,
        ),
        train_dataset=Dataset.from_list(
            [{"prompt": r["prompt"], "completion": r["completion"]} for r in rows]
        ),
        processing_class=tokenizer,
    )
    sft.train()
    grpo = GRPOTrainer(
        model=sft.model,
        reward_funcs=reward,
        args=GRPOConfig(
            output_dir=str(out / "grpo"),
            max_steps=args.grpo_steps,
            per_device_train_batch_size=args.batch_size,
            num_generations=args.num_generations,
            max_completion_length=8,
            learning_rate=args.learning_rate,
            use_vllm=False,
            dataloader_num_workers=0,
            **common,
        ),
        train_dataset=Dataset.from_list(
            [{"prompt": r["prompt"], "task_index": r["task_index"], "turn": r["turn"]} for r in rows]
        ),
        processing_class=tokenizer,
    )
    grpo.train()
    after = _greedy_reward(grpo.model, tokenizer, rows, reward)
    result = {
        "gate_turns": len(rows),
        "scenarios": len(indices),
        "mean_gate_reward": {
            "teacher_tgcc": sum(teacher) / len(teacher),
            "approve_all": sum(approve) / len(approve),
        },
        "model_before": before,
        "model_after": after,
        "sft_steps": sft.state.global_step,
        "grpo_steps": grpo.state.global_step,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    grpo.save_model(str(out / "final"))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
