"""Prompted ReAct: tool use written as text (Thought / Action / Action Input / Final Answer).

``ReActFormat`` is a format option beside native tool calling, for any tooltrap env. Instead of sending
tool schemas to the model (``tools=`` in a chat request), the tools are *described in the prompt*, by name
and a one-line description only, and the model answers in the ReAct text format::

    Thought: <reasoning>
    Action: <tool name>
    Action Input: <a JSON object of arguments>

or, when it is done::

    Thought: <reasoning>
    Final Answer: <the answer to the user>

Why: this is the harness of the error-propagation paper's release, where open-weight models without native
tool-calling support are prompted in ReAct style with the tool names and one-line descriptions and no
parameter schemas (a model must guess argument names and types, which explains part of the validation
errors the paper reports), and get at most 5 model calls per task. Running an env through this wrapper
reproduces that setting; without it the same env is played with native tool calls.

**Reset.** ``info["messages"]`` becomes the ReAct prompt: the env's own system prompt, then the tool list
and the reply format (a system message is added when the env has none), then the env's user message.
``info["tools"]`` is emptied, so chat agents send no native tool schemas, and the env's schemas are kept
in ``info["react_tools"]``. The reset observation is the new messages' text joined as the env joins it.

**Parse rules** (each :meth:`~ReActFormat.step` takes the model's raw text, or an OpenAI assistant message
dict whose text ``content`` is read, not its native ``tool_calls``; ``<think>...</think>`` blocks are
ignored):

* Markers are read at the start of a line, case-insensitively, also in markdown bold (``**Action:**``).
* An action is the *first* ``Action:`` line of the reply that names a tool, and the ``Action Input:``
  after it: what a harness that stops generation at the first ``Observation:`` runs, and what the usual
  ReAct parsers read (a model that writes several rounds at once imagined the observations after its
  first call). An ``Action:`` without a tool name (``None``, ``N/A``, nothing) is not an action. The name is trimmed of
  quotes, backticks, brackets and trailing punctuation; ``get_weather(...)`` counts as ``get_weather``.
  An unknown name reaches the env, which reports it (with a did-you-mean).
* The input runs to the next ``Thought:`` / ``Action:`` / ``Observation:`` / ``Final Answer:`` line or the
  end of the reply. A ```` ```json ```` fence around it and prose around the JSON object are tolerated.
  No input, or an empty one, is ``{}``. An input that is not a JSON object is passed to the env as the
  raw string, so the env answers with its typed invalid-call error (``parse_error`` for text that is not
  JSON, a validation error for JSON that is not an object) and the episode goes on: a malformed input
  is an invalid call, never a crash nor a final answer.
* A ``Final Answer:`` (the text after the last one, to the end of the reply) is a call of the env's
  answer tool (the terminal tool declared ``ends_as="answer"``: ``final_answer``, ``respond`` ...) with
  that text. Without such a tool the reply is passed to the env as it is (a parse error it reports).
* Both in one reply: **the action wins.** In the ReAct loop the model's turn ends at its action: a harness
  stops generation where the tool result would come, so a ``Final Answer`` written after an action was
  written over an observation the model imagined (``Observation: ...`` it never received). The action is
  executed and the rest of the reply ignored (it stays in the conversation and the trace as written).
  A reply with a ``Final Answer`` *before* an ``Action:`` is read the same way: its first action.
* Neither: the env is **not** stepped; the reply is answered with the user turn
  ``"Please provide a Final Answer."`` (:data:`NUDGE`). It still counts as a model call.

**Conversation.** Each step's ``info["messages"]`` is rewritten into the ReAct conversation: the
assistant turn is the model's raw text (a message dict's text; no ``tool_calls``), then one user turn
``Observation: <the env's observation of the call>`` (the JSON text native tool calling shows in the
tool message), so a chat agent without native tools continues the conversation correctly. The observation ``step`` returns is
the text of that user turn. The trace keeps the raw reply of each executed step
(``trace.steps[i].raw``, with ``format == "react"``); the replies of every model call, executed or not,
are in :attr:`ReActFormat.replies`.

**The cap.** After ``max_model_calls`` model calls (5, as in the paper) without a terminal call, the
wrapper ends the episode: it is truncated as the env truncates at its own step cap (``truncated=True``,
``trace.truncated == "max_steps"``, judged and rewarded as it stands) through
:func:`~tooltrap.envs.core.abort_episode`, so that the hooks of defense wrappers below still run. The
last user turn (and the observation) then ends with ``"Max steps reached."`` (:data:`MAX_STEPS_REACHED`).
The env's own step cap and error cap still apply, whichever comes first.
"""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import EnvUsageError, abort_episode, make_safe

from .formats import AnswerTool, answer_tool, message_text

#: the user turn that answers a reply with neither an action nor a final answer
NUDGE = "Please provide a Final Answer."
#: what closes an episode that the model-call cap ended
MAX_STEPS_REACHED = "Max steps reached."
#: the trace's ``truncated`` reason of that episode (the env's own step-cap reason)
TRUNCATED_REASON = "max_steps"
#: the format recorded in ``trace.steps[i].format``
FORMAT = "react"

_BOLD = r"[ \t>*_#-]*"  # markdown around a marker: "**Action:**", "- Action:", "> Action:"
_MARKER = re.compile(
    rf"^{_BOLD}(?P<kind>thought|action[ \t]*input|action|observation|final[ \t]*answer)"
    r"[ \t]*\d*[ \t]*[*_]*[ \t]*:[*_]*[ \t]*",
    re.I | re.M,
)
_THINK = re.compile(r"<think>.*?</think>", re.S)
_NO_TOOL = {"", "none", "n/a", "na", "null", "nothing", "no action"}
_FENCED = re.compile(r"^```[\w-]*[ \t]*\n?(.*?)(?:```|$)", re.S)
_DECODER = json.JSONDecoder()
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "Dr.", "Mr.", "Mrs.", "Ms.", "No.", "St.")


def one_line(description: str | None) -> str:
    """The first line of a tool description, and of that its first sentence."""
    line = next((part.strip() for part in (description or "").splitlines() if part.strip()), "")
    for match in _SENTENCE_END.finditer(line):
        head = line[: match.start()]
        if not head.endswith(_ABBREVIATIONS):
            return head
    return line


def react_prompt(tools: list[dict[str, Any]], answer: AnswerTool | None) -> str:
    """The tool list and the reply format of the ReAct prompt (appended to the env's system prompt)."""
    lines = []
    names = []
    for tool in tools:
        function = tool.get("function", tool)
        name = function.get("name", "")
        names.append(name)
        summary = one_line(function.get("description"))
        note = (
            ' (to use it, reply with "Final Answer: <your answer>")' if answer and name == answer[0] else ""
        )
        lines.append(f"- {name}: {summary}{note}" if summary else f"- {name}{note}")
    parts = [
        "You have these tools:\n" + "\n".join(lines),
        "Work one step at a time. To use a tool, reply in exactly this format and then stop:\n\n"
        "Thought: what you need to do next and why\n"
        f"Action: the name of one tool, one of [{', '.join(names)}]\n"
        'Action Input: the arguments as one JSON object, for example {"key": "value"}\n\n'
        'The tool\'s result comes back to you as "Observation: ...". Call one tool per reply.',
    ]
    if answer is not None:
        parts.append(
            "When you can answer the request, reply in this format:\n\n"
            "Thought: why you can answer now\n"
            "Final Answer: your answer to the user"
        )
    return "\n\n".join(parts)


def _tool_name(line: str) -> str:
    name = line.strip().split("(", 1)[0].strip()
    return name.strip("`'\"*_[]{}<> \t").rstrip(".,;:").strip("`'\"*_[]{}<> \t")


def _arguments(text: str) -> Any:
    """An Action Input: a JSON object (fences and trailing prose tolerated), ``{}`` when empty, else the
    raw string (the env reports it as an invalid call)."""
    body = text.strip()
    fence = _FENCED.match(body)
    if fence:
        body = fence.group(1).strip()
    if not body:
        return {}
    start = body.find("{")
    if start != -1:
        try:
            decoded, _ = _DECODER.raw_decode(body, start)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            return decoded
    return body


def parse_react(text: str) -> tuple[str, Any]:
    """Read one ReAct reply: ``("action", (name, arguments))``, ``("final_answer", text)`` or
    ``("none", None)``, by the parse rules of the module docstring."""
    visible = _THINK.sub("", text)
    markers = [
        (m.group("kind").lower().replace(" ", "").replace("\t", ""), m) for m in _MARKER.finditer(visible)
    ]

    def line_rest(match: re.Match[str]) -> str:
        end = visible.find("\n", match.end())
        return visible[match.end() : end if end != -1 else len(visible)]

    actions = [
        (i, name)
        for i, (kind, match) in enumerate(markers)
        if kind == "action" and (name := _tool_name(line_rest(match))).lower() not in _NO_TOOL
    ]
    if actions:
        first, name = actions[0]
        arguments: Any = {}
        for j in range(first + 1, len(markers)):
            if markers[j][0] == "actioninput":
                stop = markers[j + 1][1].start() if j + 1 < len(markers) else len(visible)
                arguments = _arguments(visible[markers[j][1].end() : stop])
                break
        return "action", (name, arguments)
    finals = [m for kind, m in markers if kind == "finalanswer"]
    if finals:
        answer = visible[finals[-1].end() :].strip()
        if answer:
            return "final_answer", answer
    return "none", None


class ReActFormat(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Play any tooltrap env in the prompted ReAct format (the error-propagation paper's harness).

    The prompt lists the tools by name and one-line description (no schemas) and asks for
    ``Thought`` / ``Action`` / ``Action Input`` or ``Final Answer`` replies; each ``step`` takes the
    model's raw reply (text, or an OpenAI assistant message dict). A reply with neither an action nor a
    final answer gets ``"Please provide a Final Answer."`` without stepping the env; after
    ``max_model_calls`` replies without a terminal call the episode is truncated (``"Max steps
    reached."``). See the module docstring for the prompt, the parse rules and the conversation.

    Args:
        env: A tooltrap env (or a wrapper stack over one).
        max_model_calls: Model calls (replies) per episode, executed or not (the paper: 5).
    """

    def __init__(self, env: gym.Env, max_model_calls: int = 5):
        if isinstance(max_model_calls, bool) or not isinstance(max_model_calls, int) or max_model_calls < 1:
            raise EnvUsageError(f"max_model_calls must be a whole number >= 1, got {max_model_calls!r}.")
        gym.utils.RecordConstructorArgs.__init__(self, max_model_calls=max_model_calls)
        gym.Wrapper.__init__(self, env)
        self.max_model_calls = max_model_calls
        self.answer: AnswerTool | None = None
        #: model calls so far in this episode
        self.model_calls = 0
        #: every reply of the episode: ``{"call", "raw", "read_as", "step"}`` (``step``: the trace step
        #: it was executed as, None when the env was not stepped)
        self.replies: list[dict[str, Any]] = []
        self._started = False
        self._ended = False

    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        _, info = self.env.reset(**kwargs)
        self.answer = answer_tool(info)
        tools = list(info.get("tools", []))
        block = react_prompt(tools, self.answer)
        messages = [dict(m) for m in info.get("messages", [])]
        system = next((m for m in messages if m.get("role") == "system"), None)
        if system is not None:
            own = message_text(system.get("content"))
            system["content"] = f"{own}\n\n{block}" if own.strip() else block
        else:
            messages.insert(0, {"role": "system", "content": block})
        info = {**info, "messages": messages, "tools": [], "react_tools": tools}
        self.model_calls = 0
        self.replies = []
        self._started, self._ended = True, False
        observation = "\n\n".join(message_text(m.get("content")) for m in messages)
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise EnvUsageError("Cannot call step() before reset().")
        if self._ended or getattr(self.env.unwrapped, "done", False):
            raise EnvUsageError("The episode has ended; call reset() to start a new one.")
        if isinstance(action, str):
            raw = text = action
        elif isinstance(action, dict):
            raw, text = (
                json.dumps(action, ensure_ascii=False, default=repr),
                message_text(action.get("content")),
            )
        else:
            raw, text = repr(action), ""
        # the reply's text becomes the conversation's assistant turn and the trace's raw text: both are
        # made storable and sendable here (the count is the raw text's, which holds the reply's text)
        raw, escaped = make_safe(raw, json_escapes=isinstance(action, dict))
        text = make_safe(text)[0]
        self.model_calls += 1
        read_as, parsed = parse_react(text)
        canonical: str | None = None
        if read_as == "action":
            name, arguments = parsed
            canonical = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        elif read_as == "final_answer" and self.answer is not None:
            name, argument = self.answer
            canonical = json.dumps({"name": name, "arguments": {argument: parsed}}, ensure_ascii=False)
        elif read_as == "final_answer":
            canonical = text  # no answer tool: the env reports the text as an unparseable action
        reply = {"call": self.model_calls, "raw": raw, "read_as": read_as, "step": None}
        self.replies.append(reply)
        assistant = {"role": "assistant", "content": text}
        trace = getattr(self.env.unwrapped, "trace", None)

        if canonical is None:  # neither an action nor a final answer: nudge, the env is not stepped
            observation, reward, terminated, truncated = NUDGE, 0.0, False, False
            info: dict[str, Any] = {"n_errors": trace.n_errors if trace is not None else 0}
        else:
            env_observation, reward, terminated, truncated, info = self.env.step(canonical)
            info = dict(info)
            observation = f"Observation: {env_observation}"
            if trace is not None and trace.steps:
                step = trace.steps[-1]
                step.raw, step.format, step.escaped = raw, FORMAT, step.escaped + escaped
                reply["step"] = step.step

        if not (terminated or truncated) and self.model_calls >= self.max_model_calls:
            final = abort_episode(self.env, TRUNCATED_REASON)
            reward, truncated = final["reward"], True
            info.update(verdict=final["verdict"], reward_components=final["reward_components"])
            observation = MAX_STEPS_REACHED if canonical is None else f"{observation}\n\n{MAX_STEPS_REACHED}"
        self._ended = terminated or truncated
        info["messages"] = [assistant, {"role": "user", "content": observation}]
        info["model_calls"] = self.model_calls
        info["react"] = read_as
        return observation, float(reward), terminated, truncated, info
