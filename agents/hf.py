"""A local transformers agent: renders the chat template with the tool schemas and generates in
batches. Completions are parsed with the Hermes/Qwen ``<tool_call>`` format (bare JSON and plain-text
final answers are understood too). Needs the ``train`` extra (torch, transformers)."""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from .base import ChatAgent


class TransformersModel:
    """A causal LM and its tokenizer, shared by every episode slot of a :class:`TransformersAgent`."""

    def __init__(self, path: str, *, device: str | None = None, dtype: str | None = None):
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
        batch = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        sample = temperature > 0
        with self.torch.no_grad():
            out = self.model.generate(
                **batch,
                max_new_tokens=max_new_tokens,
                do_sample=sample,
                temperature=temperature if sample else None,
                top_p=None,
                top_k=None,
                pad_token_id=tok.pad_token_id,
            )
        new = out[:, batch["input_ids"].shape[1] :]
        return [tok.decode(row, skip_special_tokens=True) for row in new]


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
        model: TransformersModel | None = None,
    ):
        self.path = path
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.backend = model or TransformersModel(path, device=device, dtype=dtype)
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
