"""A tiny, randomly initialised Qwen2-style model with a locally trained byte-level BPE tokenizer and a
chat template TRL recognises: the offline stand-in for real checkpoints in tests, examples and
throughput checks. Builds in about ten seconds on a CPU; nothing is downloaded.

``python -m tooltrap.training.tiny OUT_DIR``
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # skipped on decode
STRUCTURAL = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def _corpus(rng: random.Random) -> list[str]:
    """Prose, JSON tool calls and tool responses in the style of tooltrap prompts, so the BPE learns
    JSON punctuation and the tool names."""
    from tooltrap.envs.core import BENCHMARKS, Toolset
    from tooltrap.envs.packages import ENV_IDS, env_spec

    for env_id in ENV_IDS:  # import every packaged benchmark: their tools shape the vocabulary
        env_spec(env_id)
    # by name, not by import order: which modules a process happened to import first must not change
    # the tokenizer (it did: a shared tool name's first spec won, and the corpus's order followed)
    packaged = [cls for _, cls in sorted(BENCHMARKS.items()) if cls.__module__.startswith("tooltrap.envs.")]
    specs: dict[str, Any] = {}
    for cls in packaged:  # benchmarks may share tool names (a final answer tool): first one wins
        for spec in Toolset(cls.backends).specs.values():
            specs.setdefault(spec.name, spec)
    names = list(specs)
    words = [
        "cancel",
        "move",
        "reply",
        "archive",
        "close",
        "ticket",
        "event",
        "meeting",
        "series",
        "occurrence",
        "thread",
        "message",
        "customer",
        "attendees",
        "notify",
        "scope",
        "internal",
        "public",
        "comment",
        "priority",
        "status",
        "calendar",
        "email",
        "please",
        "only",
        "the",
        "this",
        "next",
        "week",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "northwind",
        "io",
        "dana",
        "reyes",
    ]
    keys = sorted({p for s in specs.values() for p in s.parameters["properties"]})
    out = []
    for _ in range(3000):
        out.append(" ".join(rng.sample(words, 8)))
        arguments = {rng.choice(keys): rng.choice(words) + "_" + str(rng.randint(1, 99)) for _ in range(2)}
        out.append(
            "<tool_call>\n"
            + json.dumps({"name": rng.choice(names), "arguments": arguments})
            + "\n</tool_call>"
        )
        out.append(
            "<tool_response>\n"
            + json.dumps({"tool": rng.choice(names), "ok": True, "result": {"id": rng.randint(0, 999)}})
            + "\n</tool_response>"
        )
    out.extend(json.dumps(s.schema) for s in specs.values())
    return out


def build_tiny_model(
    out_dir: str | Path, *, seed: int = 0, vocab_size: int = 2048, hidden_size: int = 64, layers: int = 2
) -> Path:
    """Write a tiny causal LM + tokenizer to ``out_dir`` and return the path."""
    import torch
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import (
        AddedToken,
        GenerationConfig,
        PreTrainedTokenizerFast,
        Qwen2Config,
        Qwen2ForCausalLM,
    )
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX
    from trl.chat_template_utils import qwen2_5_chat_template

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    tok = Tokenizer(models.BPE())
    # The same normalizer / pre-tokenizer as transformers' Qwen2Tokenizer, which AutoTokenizer swaps in
    # for model_type "qwen2": raw tokenizer.json ids then equal AutoTokenizer ids.
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(rng), trainer=trainer)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        additional_special_tokens=["<|im_start|>"],
    )
    # tool-call tags stay ordinary (non-special) tokens so they survive decoding
    hf_tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in STRUCTURAL])
    hf_tok.chat_template = qwen2_5_chat_template
    hf_tok.padding_side = "left"
    hf_tok.model_max_length = 32768
    hf_tok.save_pretrained(out)
    config = Qwen2Config(
        vocab_size=len(hf_tok),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32768,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=hf_tok.eos_token_id,
        pad_token_id=hf_tok.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=hf_tok.eos_token_id, pad_token_id=hf_tok.pad_token_id, do_sample=False, max_new_tokens=64
    )
    model.save_pretrained(out)
    return out


if __name__ == "__main__":
    path = build_tiny_model(sys.argv[1] if len(sys.argv) > 1 else "tiny-model")
    print(f"tiny model -> {path}")


def _prompt_ids(tokenizer: Any, row: dict[str, Any]) -> list[int]:
    """A task row's prompt and tools rendered by the chat template, ready for the assistant's turn."""
    return tokenizer.apply_chat_template(
        row["prompt"],
        tools=json.loads(row["tools"]),
        add_generation_prompt=True,
        tokenize=True,
        return_dict=False,
    )


def first_token_probability(
    model: Any, tokenizer: Any, rows: list[dict[str, Any]], token: str = "<tool_call>"
) -> float:
    """Lowest probability, over ``rows`` (task rows), that the model opens its turn with ``token``."""
    import torch

    target = tokenizer.convert_tokens_to_ids(token)
    lowest = 1.0
    for row in rows:
        ids = _prompt_ids(tokenizer, row)
        with torch.no_grad():
            probs = model(torch.tensor([ids])).logits[0, -1].softmax(-1)
        lowest = min(lowest, float(probs[target]))
    return lowest


def greedy_emits_call(model: Any, tokenizer: Any, rows: list[dict[str, Any]], tool_name: str) -> bool:
    """Whether the model's greedy completion of every row (task rows) is a well-formed call to
    ``tool_name`` (the opening token alone is not enough: a server parses the whole call)."""
    import torch

    for row in rows:
        ids = _prompt_ids(tokenizer, row)
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]), max_new_tokens=40, do_sample=False, pad_token_id=tokenizer.eos_token_id
            )
        text = tokenizer.decode(out[0, len(ids) :], skip_special_tokens=False)
        body = text.partition("<tool_call>")[2].partition("</tool_call>")[0].strip()
        try:
            call = json.loads(body)
        except ValueError:
            return False
        if not isinstance(call, dict) or call.get("name") != tool_name:
            return False
    return True


def warm_up_tool_caller(
    model_dir: str | Path,
    out_dir: str | Path,
    rows: list[dict[str, Any]],
    *,
    tool_name: str = "calendar_list_events",
    threshold: float = 0.9,
    rounds: int = 6,
    steps_per_round: int = 30,
) -> Path:
    """Test helper: SFT a random tiny model on ``rows`` (task rows: prompt + tools) answered by a call to
    ``tool_name`` until it opens every turn with ``<tool_call>`` (probability >= ``threshold``) and its
    greedy completion is the whole call. A random
    model never emits a call, so a GRPO tool loop would otherwise run empty."""
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    call = {"type": "function", "function": {"name": tool_name, "arguments": {}}}
    data = [
        {
            "messages": [*r["prompt"], {"role": "assistant", "content": "", "tool_calls": [call]}],
            "tools": r["tools"],
        }
        for r in rows
    ]
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    args = SFTConfig(
        output_dir=str(Path(out_dir) / "_warmup"),
        max_steps=steps_per_round,
        per_device_train_batch_size=4,
        learning_rate=1e-2,
        lr_scheduler_type="constant",
        save_strategy="no",
        report_to="none",
        bf16=False,
        max_length=8192,
        assistant_only_loss=True,
        dataloader_pin_memory=False,
        seed=0,
    )
    dataset = Dataset.from_list(data * 4)
    for _ in range(rounds):
        SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tok).train()
        model.eval()
        if first_token_probability(model, tok, rows) >= threshold and greedy_emits_call(
            model, tok, rows, tool_name
        ):
            break
        model.train()
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return Path(out_dir)


def scripted_tool_caller(
    model_dir: str | Path,
    out_dir: str | Path,
    *,
    tool_name: str = "calendar_list_events",
    answer: str = "done",
    bias: float = 100.0,
) -> Path:
    """Test helper, the no-training twin of :func:`warm_up_tool_caller`: a copy of the tiny model at
    ``model_dir`` that opens every conversation with a call to ``tool_name`` (empty arguments) and,
    once a tool has answered, calls ``respond`` with ``answer``: a short episode that executes a call
    and ends. The weights stay random; the generation config carries a transformers ``sequence_bias``
    that raises each token of the scripted turn while the turn so far is its prefix, so greedy
    decoding and TRL's sampling alike follow it, in every caller of ``generate`` (a local agent,
    GRPO's tool loop, a ``rollout_func``). For tests whose subject is what happens to a call, not
    whether a model can learn to make one (scripts/check_warmup.py checks that): seconds, not an SFT."""
    import shutil

    from transformers import AutoTokenizer, GenerationConfig

    out = Path(out_dir)
    shutil.copytree(model_dir, out, dirs_exist_ok=True)
    tok = AutoTokenizer.from_pretrained(out)

    def ids(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False)

    def scripted(call: dict[str, Any]) -> list[int]:
        return ids(f"<tool_call>\n{json.dumps(call)}\n</tool_call>{tok.eos_token}")

    turn = ids("<|im_start|>assistant\n")
    after_tool = ids(f"</tool_response>{tok.eos_token}\n") + turn  # the chat template's tool turn, closed
    first = scripted({"name": tool_name, "arguments": {}})
    then = scripted({"name": "respond", "arguments": {"message": answer}})
    config = GenerationConfig.from_pretrained(out)
    # Each key is the whole turn up to the biased token, so a token that recurs in a call ('":') is
    # never ambiguous and text outside an assistant turn is never biased. After a tool response both
    # scripts match until they part; the answer's larger bias wins there.
    config.sequence_bias = [[turn + first[: i + 1], bias] for i in range(len(first))] + [
        [after_tool + then[: i + 1], 2 * bias] for i in range(len(then))
    ]
    config.save_pretrained(out)
    return out
