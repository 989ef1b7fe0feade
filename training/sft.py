"""Supervised fine-tuning on gold tooltrap trajectories (tool calls and tool results), with TRL.

Follows TRL's example-script conventions (``TrlParser`` over script, training and model arguments;
``--config file.yaml`` supported)::

    python -m tooltrap.training.sft --model_name_or_path Qwen/Qwen2.5-0.5B-Instruct \\
        --env_id ENV_ID --split train --output_dir runs/sft --num_train_epochs 2 \\
        --use_peft --lora_r 16 --lora_alpha 32 --assistant_only_loss true

Then evaluate the checkpoint: ``tooltrap eval ENV_ID --agent hf:runs/sft --out runs/sft-eval``.

``--model_name_or_path smollm2`` trains the named offline model (docs/smollm2.md). On a machine without a
GPU the entry points turn TRL's gradient checkpointing off and run torch on one thread (unless
``TOOLTRAP_TORCH_THREADS`` or ``OMP_NUM_THREADS`` is set); without ``--max_length`` the longest row's
length is used, and a ``--max_length`` that leaves a row no assistant token is warned about.
"""

from __future__ import annotations

import os
import sys
import warnings
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


def resolve_model_name(model_args: Any) -> None:
    """``--model_name_or_path smollm2`` (a named offline model, :mod:`tooltrap.agents.pretrained`)
    becomes its converted checkpoint folder (converted on first use); anything else stays.

    Raises:
        PretrainedModelMissing: The named model's package is not installed (names the install line).
    """
    from tooltrap.agents.pretrained import resolve_model

    model_args.model_name_or_path = resolve_model(str(model_args.model_name_or_path))


#: the environment variables that choose torch's CPU threads; when none is set the entry points use 1
THREAD_VARIABLES = ("TOOLTRAP_TORCH_THREADS", "OMP_NUM_THREADS")


def cpu_defaults(training_args: Any) -> None:
    """Settings that only make sense on a GPU, turned off when there is none: TRL turns gradient
    checkpointing on by default (it trades compute for memory a CPU run does not lack, and slows it), and
    torch runs on one thread unless ``TOOLTRAP_TORCH_THREADS`` or ``OMP_NUM_THREADS`` says otherwise
    (torch's default of one thread per core made a 1,650-token forward pass of a 135M model take 108 s
    instead of 43 s on a shared 2-core machine: the threads wait on each other and on other processes)."""
    import torch

    if torch.cuda.is_available():
        return
    if getattr(training_args, "gradient_checkpointing", False):
        training_args.gradient_checkpointing = False
        print("note: no GPU: gradient checkpointing off (TRL turns it on by default)", file=sys.stderr)
    chosen = next((os.environ[v] for v in THREAD_VARIABLES if os.environ.get(v)), None)
    try:
        threads = max(1, int(chosen)) if chosen else 1
    except ValueError:
        from tooltrap.envs.core import EnvUsageError

        raise EnvUsageError(
            f"TOOLTRAP_TORCH_THREADS / OMP_NUM_THREADS must be a whole number, got {chosen!r}."
        ) from None
    torch.set_num_threads(threads)


def fit_max_length(training_args: Any, rows: list[dict[str, list[int]]], *, given: bool) -> None:
    """The SFT sequence length for tokenized rows (``input_ids`` + ``assistant_masks``): when ``--max_length``
    was not given, the longest row's length (TRL's default of 1024 keeps each row's start, and the
    assistant turns of a tool-use demonstration come at its end: every one would be dropped). When it was
    given, a warning names the rows it would leave without a single assistant token."""
    if not rows:
        return
    longest = max(len(r["input_ids"]) for r in rows)
    if not given:
        if training_args.max_length is None or training_args.max_length < longest:
            print(f"note: --max_length not given: {longest} (the longest row)", file=sys.stderr)
            training_args.max_length = longest
        return
    limit = training_args.max_length
    if limit is None:
        return
    keep_end = getattr(training_args, "truncation_mode", "keep_start") == "keep_end"
    lost = 0
    for r in rows:
        masks = r["assistant_masks"]
        kept = masks[-limit:] if keep_end else masks[:limit]
        lost += any(masks) and not any(kept)
    if lost:
        warnings.warn(
            f"--max_length {limit} drops every assistant token of {lost} of {len(rows)} rows (the longest "
            f"is {longest} tokens; the assistant turns come at the end): they teach nothing. Raise "
            "--max_length or leave it out (the longest row's length is used).",
            stacklevel=2,
        )


def max_length_given(argv: list[str] | None) -> bool:
    """Whether ``--max_length`` was set on the command line or in the ``--config`` file."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a == "--max_length" or a.startswith("--max_length=") for a in args):
        return True
    if "--config" in args and args.index("--config") + 1 < len(args):
        import yaml

        try:
            with open(args[args.index("--config") + 1]) as handle:
                config = yaml.safe_load(handle) or {}
        except OSError:
            return False
        return isinstance(config, dict) and "max_length" in config
    return False


def model_kwargs(model_args: Any) -> dict[str, Any]:
    """``from_pretrained`` kwargs from TRL's ModelConfig (revision, dtype, attention implementation)."""
    kwargs: dict[str, Any] = {"revision": model_args.model_revision}
    if model_args.dtype not in (None, "auto"):
        import torch

        kwargs["dtype"] = getattr(torch, model_args.dtype)
    if model_args.attn_implementation:
        kwargs["attn_implementation"] = model_args.attn_implementation
    return kwargs


def main(
    env_args: DemonstrationArguments, training_args: Any, model_args: Any, *, max_length_given: bool = True
) -> Any:
    """Build the demonstrations, train, save. ``max_length_given``: whether ``--max_length`` was set
    (otherwise the longest row's length is used, :func:`fit_max_length`)."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer, get_peft_config

    from .data import gold_rows, tokenize_messages

    resolve_model_name(model_args)
    preflight(training_args, model_args)
    cpu_defaults(training_args)
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
    tokenized = [tokenize_messages(r["messages"], r["tools"], tokenizer) for r in rows]
    fit_max_length(training_args, tokenized, given=max_length_given)
    dataset = Dataset.from_list(tokenized)
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
    return main(env_args, training_args, model_args, max_length_given=max_length_given(argv))


if __name__ == "__main__":
    raise SystemExit(entry_point(cli))
