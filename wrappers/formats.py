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

# re-exported: the engine finds terminal tools by how they end the episode (scripted baselines use it)
from tooltrap.envs.core import make_safe, terminal_tool

Format = Literal["auto", "openai", "hermes", "json"]
_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
# small models sometimes drop the opening tag: a JSON object closed by </tool_call> still counts
_CLOSED = re.compile(r"^\s*(\{.*?\})\s*</tool_call>", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
#: text that tries to be a tool call: when none parses, the completion is a malformed call (the env
#: answers with a parse error, an invalid call), never a final answer
_TOOL_MARKUP = re.compile(r"</?tool_call>|<function[=>]|\"arguments\"\s*:")
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
        with contextlib.suppress(ValueError, RecursionError):
            arguments = json.loads(arguments) if arguments.strip() else {}
    return {"name": name, "arguments": arguments}


def parse_openai_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls from an OpenAI chat-completions assistant message (``tool_calls``)."""
    raw = message.get("tool_calls")
    calls = [_normalize(c) for c in raw] if isinstance(raw, list) else []
    return [c for c in calls if c is not None]


def parse_hermes(text: str) -> list[dict[str, Any]]:
    """Calls inside ``<tool_call>...</tool_call>`` tags (Hermes / Qwen2.5 chat templates)."""
    out = []
    bodies = _TAG.findall(text) or _CLOSED.findall(text)
    for body in bodies:
        decoded = _loads(body)
        items = decoded if isinstance(decoded, list) else [decoded]
        out += [c for c in (_normalize(i) for i in items) if c is not None]
    return out


def _as_calls(decoded: Any) -> list[dict[str, Any]]:
    items = decoded if isinstance(decoded, list) else [decoded]
    calls = [_normalize(c) for c in items]
    return [c for c in calls if c is not None] if items and all(calls) else []


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # also numbers past Python's digit limit
        return None


def parse_json(text: str) -> list[dict[str, Any]]:
    """A bare JSON call or list of calls (optionally in a ```json fence), as the whole text."""
    stripped = text.strip()
    fence = _FENCE.match(stripped)
    if fence:
        stripped = fence.group(1)
    if not stripped.startswith(("{", "[")):
        return []
    return _as_calls(_loads(stripped))


_ANY_FENCE = re.compile(r"```(?:json|tool_call|tool)?[ \t]*\n?(.*?)```", re.S)
_DECODER = json.JSONDecoder()


def parse_fenced(text: str) -> list[dict[str, Any]]:
    """Calls in the first fenced code block (anywhere in the text) that holds one call or a list."""
    for block in _ANY_FENCE.findall(text):
        calls = _as_calls(_loads(block.strip()))
        if calls:
            return calls
    return []


def parse_trailing_json(text: str, tries: int = 32) -> list[dict[str, Any]]:
    """A call (or list) that ends the text after some prose: "Let me check.\n{"name": ...}"."""
    end = len(text.rstrip())
    starts = [i for i, ch in enumerate(text) if ch in "{["][-tries:]
    for start in reversed(starts):
        try:
            decoded, stop = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if stop == end:
            calls = _as_calls(decoded)
            if calls:
                return calls
    return []


#: (tool name, the string argument that carries the text)
AnswerTool = tuple[str, str]


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
            Text with tool-call markup that does not parse (``<tool_call>`` tags, an ``"arguments":``
            key) is always kept raw: a malformed call is an invalid call, not an answer.
        answer: The env's answer tool and its text argument (:func:`answer_tool` of the reset info);
            without it plain text is kept.
    """
    return parse_completion_format(completion, fmt, plain_text=plain_text, answer=answer)[0]


def message_text(content: Any) -> str:
    """The text of a message ``content``: a string, or OpenAI content parts (``{"type": "text"}``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def parse_completion_format(
    completion: str | dict[str, Any],
    fmt: Format = "auto",
    *,
    plain_text: Literal["answer", "keep"] = "answer",
    answer: AnswerTool | None = None,
) -> tuple[str, str]:
    """:func:`parse_completion`, and the format the call was found in: ``openai`` (tool_calls),
    ``hermes`` (``<tool_call>`` tags), ``json`` (the whole text), ``fenced`` (a fenced block),
    ``trailing_json`` (a call after prose), ``plain_text`` (a final answer) or ``none``."""
    text = message_text(completion.get("content")) if isinstance(completion, dict) else completion
    visible = _THINK.sub("", text if isinstance(text, str) else "")
    calls: list[dict[str, Any]] = []
    found = "none"
    if isinstance(completion, dict) and fmt in ("auto", "openai"):
        calls, found = parse_openai_message(completion), "openai"
    if not calls and fmt in ("auto", "hermes"):
        calls, found = parse_hermes(visible), "hermes"
    if not calls and fmt in ("auto", "json"):
        calls, found = parse_json(visible), "json"
        if not calls:
            calls, found = parse_fenced(visible), "fenced"
        if not calls:
            calls, found = parse_trailing_json(visible), "trailing_json"
    if calls:
        return json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False), found
    if plain_text == "answer" and answer is not None and visible.strip() and not _TOOL_MARKUP.search(visible):
        name, argument = answer
        action = json.dumps({"name": name, "arguments": {argument: visible.strip()}}, ensure_ascii=False)
        return action, "plain_text"
    return visible, "none"


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
        raw = action if isinstance(action, str) else json.dumps(action, ensure_ascii=False, default=repr)
        # the trace keeps the raw text, so it is made storable here; the action is made safe by the env
        raw, escaped = make_safe(raw, json_escapes=not isinstance(action, str))
        canonical, found = parse_completion_format(
            action, self.fmt, plain_text=self.plain_text, answer=self.answer
        )
        result = self.env.step(canonical)
        trace = getattr(self.env.unwrapped, "trace", None)
        if trace is not None and trace.steps:
            step = trace.steps[-1]
            step.raw, step.format, step.escaped = raw, found, step.escaped + escaped
        return result
