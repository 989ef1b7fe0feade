"""Defenses are gymnasium wrappers, registered by name.

A defense is a :class:`Defense` subclass: a ``gym.Wrapper`` that is also an engine
:class:`~tooltrap.envs.core.Hook`. Its hook methods (``on_reset``, ``before_call``, ``after_call``,
``before_judge``) are active exactly for the calls that pass through the wrapper, so the defense shows in
the wrapper stack and in ``env.spec``, and removing the wrapper removes it. Write one in a few lines::

    from tooltrap.envs.core import Intercept
    from tooltrap.wrappers.defenses import Defense, register_defense

    @register_defense("read-only")
    class ReadOnly(Defense):
        \"\"\"Refuses every write: the agent may only look.\"\"\"

        def before_call(self, env, name, arguments):
            if env.executor.toolset.kinds.get(name) in ("write", "commit"):
                return Intercept({"refused": True}, kind="gate", reason="read-only session")
            return name, arguments

``tooltrap eval ... --defense read-only`` (or ``apply_defense(env, "read-only")``) then uses it, and
``tooltrap list`` shows it with the first line of its docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gymnasium as gym

from tooltrap.envs.core import EnvUsageError, Hook, ToolEnv, UnknownNameError, abort_episode


class Defense(gym.Wrapper, gym.utils.RecordConstructorArgs, Hook):
    """Base of defenses: a wrapper whose hook methods act on the episodes stepped through it.

    Constructor keyword arguments are recorded (``env.spec`` rebuilds the defense). Subclasses that take
    options accept them as keyword arguments and pass them to ``super().__init__(env, **options)``.
    """

    def __init__(self, env: gym.Env, **options: Any):
        gym.utils.RecordConstructorArgs.__init__(self, **options)
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, ToolEnv):
            raise EnvUsageError(
                f"{type(self).__name__} wraps tooltrap envs, not {type(env.unwrapped).__name__}."
            )

    @property
    def base(self) -> ToolEnv:
        return self.env.unwrapped  # type: ignore[return-value]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        with self.base.using_hooks(self):
            return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        with self.base.using_hooks(self):
            return self.env.step(action)

    def abort(self, reason: str) -> dict[str, Any]:
        """End the episode from outside with this defense's hooks active (see ``abort_episode``)."""
        with self.base.using_hooks(self):
            return abort_episode(self.env, reason)


@dataclass(frozen=True)
class DefenseEntry:
    name: str
    factory: Callable[..., gym.Env]
    description: str
    options: dict[str, Any] = field(default_factory=dict)
    #: the benchmarks it is made for (the paper that defines it evaluates it there; ``tooltrap list``
    #: shows it under them); empty: any benchmark
    benchmarks: tuple[str, ...] = ()

    def __call__(self, env: gym.Env) -> gym.Env:
        return self.factory(env, **self.options)


#: name -> registered defense (``tooltrap list`` shows them)
DEFENSES: dict[str, DefenseEntry] = {}
F = TypeVar("F", bound=Callable[..., gym.Env])


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0].strip() if (doc or "").strip() else ""


def register_defense(
    name: str, *, description: str | None = None, benchmarks: tuple[str, ...] = (), **options: Any
) -> Callable[[F], F]:
    """Class decorator: register a defense wrapper under ``name`` (``options`` are passed to it;
    ``benchmarks``: the benchmarks it is made for, by name, none for any)."""

    def register(factory: F) -> F:
        add_defense(name, factory, description=description, benchmarks=benchmarks, **options)
        return factory

    return register


def add_defense(
    name: str,
    factory: Callable[..., gym.Env],
    *,
    description: str | None = None,
    benchmarks: tuple[str, ...] = (),
    **options: Any,
) -> None:
    """Register ``factory(env, **options)`` under ``name`` (a second name for a configured defense)."""
    DEFENSES[name] = DefenseEntry(
        name, factory, description or _first_line(factory.__doc__), dict(options), tuple(benchmarks)
    )


def apply_defense(env: gym.Env, name: str | None) -> gym.Env:
    """Wrap ``env`` with the named defense (``None``, ``""`` or ``"none"``: unchanged)."""
    if name in (None, "", "none"):
        return env
    try:
        entry = DEFENSES[name]
    except KeyError:
        raise UnknownNameError("defense", name, DEFENSES) from None
    return entry(env)
