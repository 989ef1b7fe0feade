"""Policies for the roles of a multi-agent env (``tooltrap.envs.multiagent``), by env and role.

Every role of every multi-agent env has deterministic scripted policies, which the env's module declares
(``ROLE_POLICIES``: role -> name -> ``"module:attribute"``; ``DEFAULT_POLICIES``: the one each role
plays when none is given; ``ROLE_PROMPTS``: a model's system prompt per text role), and any role
can be played by a model: ``openai:MODEL`` (and ``hf:PATH`` for the assistant). The assistant's
observation and action are the single-agent env's, so a model assistant is the ordinary model agent;
the other roles answer in plain text (a reply, an attack choice, a decision), so their model is wrapped
in :class:`TextRoleAgent`, which shows it the role's own observation only (never the assistant's) and
returns the visible text of its reply.

    policy = make_role_policy(ENV, "gate", "openai:qwen", base_url=URL)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, EnvUsageError, UnknownNameError

from .registry import PREFIXES, make_agent


def _env_module(env: str) -> Any:
    """The module of multi-agent env ``env`` (its factories and role policies)."""
    import importlib

    from tooltrap.envs.multiagent import ENVS

    if env not in ENVS:
        raise UnknownNameError("multi-agent env", env, list(ENVS))
    return importlib.import_module(ENVS[env])


def _scripted(env: str) -> dict[str, dict[str, str]]:
    """Role -> name -> ``"module:attribute"`` of the scripted policies ``env`` declares."""
    return dict(getattr(_env_module(env), "ROLE_POLICIES", {}))


def default_policies(env: str) -> dict[str, str]:
    """Role -> the policy each role plays when none is given (the env's deterministic reference), in the
    env's role order."""
    return dict(_env_module(env).DEFAULT_POLICIES)


def role_names(env: str) -> list[str]:
    """The roles of ``env`` in the env's order."""
    return list(default_policies(env))


def scripted_policies(env: str) -> dict[str, list[str]]:
    """Role -> the names of its scripted policies."""
    return {role: list(table) for role, table in _scripted(env).items()}


def _load(path: str) -> Callable[[], Any]:
    import importlib

    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


class TextRoleAgent(Agent):
    """A chat model playing a text role (the user, the attacker, the gate): its conversation is the role's
    system prompt, then each of the role's observations as a user message and its own replies; the
    action is the visible text of its reply (no tools). It sees only what the env gives its role.

    Args:
        model: An OpenAI-compatible chat agent (its client, settings and concurrency limit are used).
        role: The role it plays.
        prompt: Its system prompt (the env module's ``ROLE_PROMPTS[role]``).
    """

    writes_text: ClassVar[bool] = True
    transport_keys: ClassVar[tuple[str, ...]] = ("base_url",)

    def __init__(self, model: Any, role: str, prompt: str = ""):
        self.model, self.role, self.prompt = model, role, prompt
        self.messages: list[dict[str, Any]] = []
        self.seed: int | None = None
        self.last_raw: Any = None

    def clone(self) -> TextRoleAgent:
        """A copy for another episode in flight: the model's clone (sharing its client and concurrency
        limit) and a fresh conversation."""
        return TextRoleAgent(self.model.clone(), self.role, self.prompt)

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        self.messages = [{"role": "system", "content": self.prompt}]
        self.seed = seed

    def act(self, observation: str, info: dict[str, Any]) -> str:
        from tooltrap.wrappers.formats import message_text

        self.messages.append({"role": "user", "content": observation})
        reply = self.model.reply(self.messages, [], seed=self.seed)
        text = message_text(reply.message.get("content"))
        self.last_raw = reply.message
        self.messages.append({"role": "assistant", "content": text})
        return text

    def describe(self) -> dict[str, Any]:
        return {**self.model.describe(), "role": self.role}


def make_role_policy(env: str, role: str, spec: str, **kwargs: Any) -> Any:
    """The policy ``spec`` for ``role`` of multi-agent env ``env``: one of the role's scripted policies
    (:func:`scripted_policies`), ``openai:MODEL`` for any role, ``hf:PATH`` for the assistant;
    ``kwargs`` go to a model agent's constructor (a scripted policy takes none).

    Raises:
        UnknownNameError: ``env``, ``role`` or a scripted name is unknown (with a did-you-mean).
        EnvUsageError: Options given to a scripted policy, or ``hf:`` for a text role.
    """
    table = _scripted(env)
    if role not in table:
        raise UnknownNameError(f"role of {env}", role, list(table))
    if spec.startswith(PREFIXES):
        if role != "assistant" and spec.startswith("hf:"):
            raise EnvUsageError(f"{role}={spec}: a local model plays the assistant only; use openai:MODEL")
        agent = make_agent(spec, **kwargs)
        if role == "assistant":
            return agent
        prompts: dict[str, str] = getattr(_env_module(env), "ROLE_PROMPTS", {})
        return TextRoleAgent(agent, role, prompts.get(role, ""))
    path = table[role].get(spec)
    if path is None:
        raise UnknownNameError(
            f"{role} policy of {env}",
            spec,
            list(table[role]),
            hint=f"Options: {', '.join(table[role])}, or openai:MODEL.",
        )
    if kwargs:
        raise EnvUsageError(f"{role}={spec} is a scripted policy: it takes no options ({sorted(kwargs)})")
    return _load(path)()


def describe_policy(policy: Any, spec: str) -> dict[str, Any]:
    """What identifies a role's policy in a run (``run.json``): the spec as given, and the policy's own
    description (its settings) when it has one."""
    describe = getattr(policy, "describe", None)
    described = describe() if callable(describe) else {}
    return {"spec": spec, **described, "name": described.get("name") or spec}
