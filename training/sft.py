"""Supervised fine-tuning on gold tooltrap trajectories (tool calls and tool results), with TRL.

Follows TRL's example-script conventions (``TrlParser`` over script, training and model arguments;
``--config file.yaml`` supported)::

    python -m tooltrap.training.sft --model_name_or_path Qwen/Qwen2.5-0.5B-Instruct \\
        --env_id ENV_ID --split train --output_dir runs/sft --num_train_epochs 2 \\
        --use_peft --lora_r 16 --lora_alpha 32 --assistant_only_loss true

Then evaluate the checkpoint: ``tooltrap eval ENV_ID --agent hf:runs/sft --out runs/sft-eval``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@dataclass
class EnvArguments:
    """Which tooltrap tasks to train on."""

    env_id: str = field(metadata={"help": "A registered tooltrap env id (required)."})
    tasks_file: str | None = field(
        default=None, metadata={"help": "Your own task file (JSON/JSONL) instead of the packaged corpus."}
    )
    tasks: str | None = field(
        default=None, metadata={"help": "Task filter (globs on task/template ids, or label=value)."}
    )
    split: str = field(
        default="train",
        metadata={"help": "all, train or test (template-level split), for envs that take it."},
    )
    toolset: str = field(
        default="all",
        metadata={"help": "all (as in the paper) or target (shorter prompts), for envs that take it."},
    )
    state_format: str = field(
        default="indented",
        metadata={"help": "indented or compact state JSON in the prompt, for envs that take it."},
    )
    env_arg: list[str] = field(
        default_factory=list,
        metadata={"help": "More env kwargs as KEY=VALUE (JSON values), like tooltrap eval."},
    )
    repeat: int = field(default=1, metadata={"help": "Repeat the rows this many times."})

    def env_kwargs(self, env_id: str | None = None) -> dict[str, Any]:
        """The env kwargs: ``split`` / ``toolset`` / ``state_format`` for the envs whose constructor takes
        them, ``tasks_file``, and every ``--env_arg``."""
        from tooltrap.envs.core import parse_key_values

        from .environment import env_parameters

        accepted = env_parameters(env_id or self.env_id)
        kwargs: dict[str, Any] = {
            k: v
            for k, v in (
                ("split", self.split),
                ("toolset", self.toolset),
                ("state_format", self.state_format),
            )
            if accepted is None or k in accepted
        }
        if self.tasks_file:
            kwargs["tasks_file"] = self.tasks_file
        kwargs.update(parse_key_values(self.env_arg))
        return kwargs


@dataclass
class DemonstrationArguments(EnvArguments):
    """Which tasks, and how their gold demonstrations are written."""

    trap_turn: bool = field(
        default=False,
        metadata={"help": "Demonstrations say, in the safe action's turn, which trap they avoid."},
    )


def _needs_gpu(flag: str) -> Exception:
    from tooltrap.envs.core import EnvUsageError

    return EnvUsageError(
        f"--{flag} true needs a GPU (the configs in configs/ are GPU runs) and none is visible: "
        f"pass --{flag} false (and --dtype float32) to train on the CPU."
    )


def preflight(training_args: Any, model_args: Any) -> None:
    """What would fail only after minutes of data building, checked first: half precision asked for where
    there is no GPU, and a model that is neither a local folder nor in the local cache while the hub
    cannot be reached (``HF_HUB_OFFLINE=1``).

    Raises:
        EnvUsageError: Naming the option to change.
    """
    import torch

    from tooltrap.envs.core import EnvUsageError

    precision = [flag for flag in ("bf16", "fp16") if getattr(training_args, flag, False)]
    if precision and not torch.cuda.is_available():
        raise _needs_gpu(precision[0])
    model = str(model_args.model_name_or_path)
    if os.path.isdir(model) or os.environ.get("HF_HUB_OFFLINE") != "1":
        return
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(model, "config.json", revision=model_args.model_revision)
    if not isinstance(cached, str):
        raise EnvUsageError(
            f"--model_name_or_path {model}: not a local folder and not in the local Hugging Face cache, and "
            "HF_HUB_OFFLINE=1 forbids a download: download it where the hub is reachable "
            f"(huggingface-cli download {model}) or pass a checkpoint folder."
        )


def model_kwargs(model_args: Any) -> dict[str, Any]:
    """``from_pretrained`` kwargs from TRL's ModelConfig (revision, dtype, attention implementation)."""
    kwargs: dict[str, Any] = {"revision": model_args.model_revision}
    if model_args.dtype not in (None, "auto"):
        import torch

        kwargs["dtype"] = getattr(torch, model_args.dtype)
    if model_args.attn_implementation:
        kwargs["attn_implementation"] = model_args.attn_implementation
    return kwargs


def main(env_args: DemonstrationArguments, training_args: Any, model_args: Any) -> Any:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer, get_peft_config

    from .data import gold_rows, tokenize_messages

    preflight(training_args, model_args)
    rows = (
        gold_rows(
            env_args.env_id,
            tasks=env_args.tasks,
            env_kwargs=env_args.env_kwargs(),
            trap_turn=env_args.trap_turn,
        )
        * env_args.repeat
    )
    tokenizer = AutoTokenizer.from_pretrained(
        model_args.model_name_or_path, revision=model_args.model_revision
    )
    # tokenized here: chat messages through Arrow would merge every tool call's argument names
    dataset = Dataset.from_list([tokenize_messages(r["messages"], r["tools"], tokenizer) for r in rows])
    # the rows carry assistant_masks, which TRL applies as they are: the loss is on the assistant turns
    # whatever --assistant_only_loss says (TRL rejects that flag for tokenized rows)
    training_args.assistant_only_loss = False
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs(model_args))
    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
    )
    trainer.train()
    save_final(trainer, tokenizer, training_args.output_dir)
    return trainer


def save_final(trainer: Any, tokenizer: Any, output_dir: str) -> None:
    """Save a standalone checkpoint: LoRA adapters are merged into the base weights, so the result
    loads with ``--agent hf:DIR`` and serves with vLLM as it is."""
    model = trainer.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)


def parse_training_args(parser: Any, argv: list[str] | None) -> Any:
    """``parser.parse_args_and_config(argv)``, with transformers' refusal of half precision on a machine
    without a GPU (raised while the options are parsed) turned into the same message as :func:`preflight`."""
    try:
        return parser.parse_args_and_config(args=argv)
    except ValueError as err:
        flag = next((f for f in ("bf16", "fp16") if f in str(err)), None)
        if flag is None or "gpu" not in str(err).lower():
            raise
        raise _needs_gpu(flag) from None


def entry_point(run: Any) -> int:
    """Run an entry point's ``cli`` as a command: a mistake in its options (a typed tooltrap error) is one
    line and exit status 2, as ``tooltrap`` commands do, not a traceback."""
    import sys

    from tooltrap.envs.core import TooltrapError

    try:
        run()
    except TooltrapError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def cli(argv: list[str] | None = None) -> Any:
    from trl import ModelConfig, SFTConfig, TrlParser

    parser = TrlParser((DemonstrationArguments, SFTConfig, ModelConfig))
    env_args, training_args, model_args = parse_training_args(parser, argv)
    return main(env_args, training_args, model_args)


if __name__ == "__main__":
    raise SystemExit(entry_point(cli))
