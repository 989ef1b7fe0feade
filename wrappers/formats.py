"""Tool-call formats: turn what a model wrote into the env's canonical action, and back.

Formats understood (``parse_completion``): OpenAI ``tool_calls`` (a message dict), Hermes/Qwen
``<tool_call>{...}</tool_call>`` tags, bare JSON (an object or a list of calls), and plain-text final
answers (mapped to the env's answer tool, the terminal tool declared ``ends_as="answer"``, or left as
text for the env to reject). ``ToolCallFormat`` is a wrapper that accepts raw model output as the
action of any tooltrap env and records the raw text in the trace.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Literal

import gymnasium as gym

Format = Literal["auto", "openai", "hermes", "json"]
_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
# small models sometimes drop the opening tag: a JSON object closed by </tool_call> still counts
_CLOSED = re.compile(r"^\s*(\{.*?\})\s*</tool_call>", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def _normalize(call: Any) -> dict[str, Any] | None:
    """``{"name", "arguments"}`` from the shapes models produce (OpenAI ``function`` wrapper, string
    arguments, ``parameters`` instead of ``arguments``)."""
    if not isinstance(call, dict):
        return None
    if "function" in call and isinstance(call["function"], dict):
        call = call["function"]
    name = call.get("name")
    if not isinstance(name, str):
        return None
    arguments = call.get("arguments", call.get("parameters", {}))
    if isinstance(arguments, str):
        # an undecodable string stays a string: the env reports it as invalid arguments
        with contextlib.suppress(json.JSONDecodeError):
            arguments = json.loads(arguments) if arguments.strip() else {}
    return {"name": name, "arguments": arguments}


def parse_openai_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls from an OpenAI chat-completions assistant message (``tool_calls``)."""
    calls = [_normalize(c) for c in message.get("tool_calls") or []]
    return [c for c in calls if c is not None]


def parse_hermes(text: str) -> list[dict[str, Any]]:
    """Calls inside ``<tool_call>...</tool_call>`` tags (Hermes / Qwen2.5 chat templates)."""
    out = []
    bodies = _TAG.findall(text) or _CLOSED.findall(text)
    for body in bodies:
        try:
            call = _normalize(json.loads(body))
        except json.JSONDecodeError:
            continue
        if call is not None:
            out.append(call)
    return out


def parse_json(text: str) -> list[dict[str, Any]]:
    """A bare JSON call or list of calls (optionally in a ```json fence)."""
    stripped = text.strip()
    fence = _FENCE.match(stripped)
    if fence:
        stripped = fence.group(1)
    if not stripped.startswith(("{", "[")):
        return []
    try:
        decoded = json.loads(stripped)
    except json.JSONDecodeError:
        return []
    items = decoded if isinstance(decoded, list) else [decoded]
    calls = [_normalize(c) for c in items]
    return [c for c in calls if c is not None] if all(calls) else []


#: (tool name, the string argument that carries the text)
AnswerTool = tuple[str, str]


def terminal_tool(info: dict[str, Any], *dispositions: str) -> tuple[str, list[str]] | None:
    """The first terminal tool of an env (from its reset ``info``) that ends the episode with one of
    ``dispositions`` (in that order), with its required string parameters; None when there is none."""
    terminals: dict[str, str] = info.get("terminal_tools", {})
    schemas = {t["function"]["name"]: t["function"] for t in info.get("tools", [])}
    for wanted in dispositions:
        for name, ends_as in terminals.items():
            if ends_as == wanted:
                params = schemas.get(name, {}).get("parameters", {})
                props = params.get("properties", {})
                strings = [p for p in params.get("required", []) if props.get(p, {}).get("type") == "string"]
                return name, strings
    return None


def answer_tool(info: dict[str, Any]) -> AnswerTool | None:
    """The env's answer tool and the argument a plain-text final answer goes into."""
    found = terminal_tool(info, "answer")
    return (found[0], found[1][0]) if found and found[1] else None


def parse_completion(
    completion: str | dict[str, Any],
    fmt: Format = "auto",
    *,
    plain_text: Literal["answer", "keep"] = "answer",
    answer: AnswerTool | None = None,
) -> str:
    """The canonical env action (JSON text) for a model completion.

    Args:
        completion: The model's text, or an OpenAI assistant message dict.
        fmt: Which format to expect; ``auto`` tries OpenAI tool_calls, Hermes tags, then bare JSON.
        plain_text: What a completion without any tool call becomes: a call of the ``answer`` tool
            carrying the text (a final answer), or the raw text (the env then returns a parse error).
        answer: The env's answer tool and its text argument (:func:`answer_tool` of the reset info);
            without it plain text is kept.
    """
    text = completion.get("content") or "" if isinstance(completion, dict) else completion
    calls: list[dict[str, Any]] = []
    if isinstance(completion, dict) and fmt in ("auto", "openai"):
        calls = parse_openai_message(completion)
    visible = _THINK.sub("", text or "")
    if not calls and fmt in ("auto", "hermes"):
        calls = parse_hermes(visible)
    if not calls and fmt in ("auto", "json"):
        calls = parse_json(visible)
    if calls:
        return json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)
    if plain_text == "answer" and answer is not None and visible.strip():
        name, argument = answer
        return json.dumps({"name": name, "arguments": {argument: visible.strip()}}, ensure_ascii=False)
    return visible


def render_hermes(calls: list[dict[str, Any]]) -> str:
    """The Hermes/Qwen text of calls (what a model trained on that template emits)."""
    return "\n".join(f"<tool_call>\n{json.dumps(c, ensure_ascii=False)}\n</tool_call>" for c in calls)


class ToolCallFormat(gym.Wrapper):
    """Accept raw model output as the action of any tooltrap env.

    The completion is parsed with :func:`parse_completion` into the canonical JSON action (plain text
    becomes the env's answer tool); the raw text is kept in the trace (``trace.steps[i].raw``).
    """

    def __init__(
        self, env: gym.Env, fmt: Format = "auto", *, plain_text: Literal["answer", "keep"] = "answer"
    ):
        super().__init__(env)
        self.fmt = fmt
        self.plain_text = plain_text
        self.answer: AnswerTool | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self.answer = answer_tool(info)
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        raw = action if isinstance(action, str) else json.dumps(action, ensure_ascii=False)
        canonical = parse_completion(action, self.fmt, plain_text=self.plain_text, answer=self.answer)
        result = self.env.step(canonical)
        trace = getattr(self.env.unwrapped, "trace", None)
        if trace is not None and trace.steps:
            trace.steps[-1].raw = raw
        return result
