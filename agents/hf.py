"""A local transformers agent: renders the chat template with the tool schemas and generates in
batches. Completions are parsed with the Hermes/Qwen ``<tool_call>`` format (bare JSON and plain-text
final answers are understood too). Needs the ``train`` extra (torch, transformers)."""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from .base import ChatAgent


class TransformersModel:
    """A causal LM and its tokenizer, shared by every episode slot of a :class:`TransformersAgent`.

    With ``prefix_cache`` (the default) the key/value cache of the prompt prefix that a batch's
    conversations share (the system prompt and tool schemas, often 95% of a turn's prompt) is computed
    once and kept: a later batch whose prompts all start with it computes only what follows, and one that
    shares only part of it (another task's prompt after the same system prompt and tools) cuts the kept
    cache back to that part. The result
    is the same as without it (the same positions, the same attention; a test checks identical greedy
    output): the prefix's keys and values do not depend on what follows it. The conversations' own parts
    are left-padded where they start, after the shared prefix, so that every token keeps its position.
    """

    #: a shared prefix shorter than this is not worth a cache
    min_prefix_tokens: ClassVar[int] = 32

    def __init__(
        self, path: str, *, device: str | None = None, dtype: str | None = None, prefix_cache: bool = True
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        kwargs: dict[str, Any] = {}
        if dtype:
            kwargs["dtype"] = getattr(torch, dtype)
        self.model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.prefix_cache = prefix_cache
        #: the cached prefix: its token ids and the model's key/value cache for them (batch of one)
        self._prefix: tuple[list[int], Any] | None = None
        #: prefix tokens computed and reused so far (what the cache saved: ``reused``)
        self.prefix_stats = {"computed": 0, "reused": 0}

    def generate(
        self,
        conversations: list[list[dict[str, Any]]],
        tools: list[list[dict[str, Any]]],
        *,
        max_new_tokens: int,
        temperature: float,
    ) -> list[str]:
        """One batched generation: one completion (text, special tokens removed) per conversation."""
        tok = self.tokenizer
        prompts = [
            tok.apply_chat_template(conv, tools=t or None, add_generation_prompt=True, tokenize=False)
            for conv, t in zip(conversations, tools, strict=True)
        ]
        sample = temperature > 0
        options: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "do_sample": sample,
            "temperature": temperature if sample else None,
            "top_p": None,
            "top_k": None,
            "pad_token_id": tok.pad_token_id,
        }
        ids = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
        prefix = self._shared_prefix(ids) if self.prefix_cache else None
        if prefix is None:
            batch = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
            with self.torch.no_grad():
                out = self.model.generate(**batch, **options)
            new = out[:, batch["input_ids"].shape[1] :]
            return [tok.decode(row, skip_special_tokens=True) for row in new]
        import copy

        n, cache, fresh = prefix
        # the rows the prefix served without computing it (a fresh prefix was computed once, for one row)
        self.prefix_stats["reused"] += n * (len(ids) - fresh)
        rests = [row[n:] for row in ids]
        width = max(len(r) for r in rests)
        input_ids = [ids[0][:n] + [tok.pad_token_id] * (width - len(r)) + r for r in rests]
        mask = [[1] * n + [0] * (width - len(r)) + [1] * len(r) for r in rests]
        past = copy.deepcopy(cache)  # generate extends the cache it is given: the kept one stays the prefix
        if len(ids) > 1:
            past.batch_repeat_interleave(len(ids))
        tensor = self.torch.tensor
        with self.torch.no_grad():
            out = self.model.generate(
                input_ids=tensor(input_ids, device=self.device),
                attention_mask=tensor(mask, device=self.device),
                **{_cache_keyword(): past},
                **options,
            )
        return [tok.decode(row, skip_special_tokens=True) for row in out[:, n + width :]]

    def _shared_prefix(self, ids: list[list[int]]) -> tuple[int, Any, bool] | None:
        """The cached prefix for a batch of prompts (``ids``): its length, its cache and whether it was
        computed just now (when the kept one does not fit); None when the prompts share too little. The prefix leaves at least one token of
        every prompt to the generation call, which must feed the model something."""
        limit = min(len(row) for row in ids) - 1
        shared = ids[0][:limit]
        for row in ids[1:]:
            shared = shared[: _common(shared, row)]
        if self._prefix is not None:
            kept_ids, kept = self._prefix
            if len(kept_ids) <= len(shared) and shared[: len(kept_ids)] == kept_ids:
                return len(kept_ids), kept, False
            # what this batch shares with the kept prefix (the system prompt and tools of another task):
            # the kept cache cut back to it (a negative crop removes that many tokens in every
            # transformers version), nothing computed again
            common = _common(kept_ids, shared)
            if common >= self.min_prefix_tokens:
                kept.crop(common - len(kept_ids))
                self._prefix = (kept_ids[:common], kept)
                return common, kept, False
        if len(shared) < self.min_prefix_tokens:
            return None
        with self.torch.no_grad():
            cache = self.model(
                input_ids=self.torch.tensor([shared], device=self.device), use_cache=True
            ).past_key_values
        self._prefix = (shared, cache)
        self.prefix_stats["computed"] += len(shared)
        return len(shared), cache, True


def _cache_keyword() -> str:
    """``generate``'s name for a key/value cache handed in: ``cache`` in newer transformers, which
    deprecate the older ``past_key_values``."""
    from transformers.generation import utils

    return "cache" if "cache" in getattr(utils, "ALL_CACHE_NAMES", ()) else "past_key_values"


def _common(a: list[int], b: list[int]) -> int:
    """The length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class TransformersAgent(ChatAgent):
    """Local model agent. ``clone()`` gives per-episode slots that share the model; the runner batches
    their generations (``batchable``)."""

    name: ClassVar[str] = "hf"
    batchable: ClassVar[bool] = True

    def __init__(
        self,
        path: str,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        device: str | None = None,
        dtype: str | None = None,
        prefix_cache: bool = True,
        model: TransformersModel | None = None,
    ):
        self.path = path
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.backend = model or TransformersModel(path, device=device, dtype=dtype, prefix_cache=prefix_cache)
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.last_raw: str | None = None
        self._fresh = True

    def describe(self) -> dict[str, Any]:
        return {
            "name": f"hf:{self.path}",
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
        }

    # batched protocol: prepare -> generate (shared, batched) -> finish
    def prepare(
        self, observation: str, info: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return self.conversation(info, _for_template), self.tools

    def generate(self, requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]) -> list[str]:
        return self.backend.generate(
            [r[0] for r in requests],
            [r[1] for r in requests],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
        )

    def finish(self, output: str) -> str:
        self.last_raw = output
        return self.to_action(output)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self.finish(self.generate([self.prepare(observation, info)])[0])


def _for_template(message: dict[str, Any]) -> dict[str, Any]:
    """Chat templates expect tool-call arguments as objects, not JSON strings."""
    if message.get("role") != "assistant" or not message.get("tool_calls"):
        return dict(message)
    import json

    calls = []
    for call in message["tool_calls"]:
        fn = dict(call["function"])
        if isinstance(fn.get("arguments"), str):
            with contextlib.suppress(json.JSONDecodeError):
                fn["arguments"] = json.loads(fn["arguments"])
        calls.append({**call, "function": fn})
    return {**message, "tool_calls": calls}
