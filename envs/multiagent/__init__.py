"""Multi-agent variants of tooltrap's benchmarks (PettingZoo, the ``multiagent`` extra): the roles of a
benchmark (the assistant, the user, ...) as agents over the same engine as the single-agent envs.

Each env is a module named as PettingZoo names its envs, with ``parallel_env()``, ``env()`` and
``raw_env()`` factories::

    from tooltrap.envs.multiagent import sabench_dialogue_v0

    env = sabench_dialogue_v0.parallel_env(ambiguous=True)
    observations, infos = env.reset(seed=0)

``make("sabench_dialogue_v0", **kwargs)`` builds one by name (``aec=True`` for the AEC form);
:data:`ENVS` lists them. Importing this package is cheap; PettingZoo is imported with an env module.

The assistant's side of a dialogue is also a Gymnasium env id (:data:`ROLE_ENV_IDS`, registered by
``import tooltrap``): ``gym.make("SABench-Dialogue-v0")`` is the dialogue with the scripted user played
inside (``user=`` another policy), a single-agent tooltrap env in every other way, so TRL training
(``tooltrap.training``) and the scripted agents run on it as on ``SABench-v0``.
"""

from __future__ import annotations

import importlib
from typing import Any

from tooltrap.envs.core import EnvUsageError, UnknownNameError

#: env name -> its module (the PettingZoo-style factories)
ENVS: dict[str, str] = {
    "sabench_dialogue_v0": "tooltrap.envs.multiagent.sabench_dialogue_v0",
    "sentry_arena_v0": "tooltrap.envs.multiagent.sentry_arena_v0",
}


#: Gymnasium id -> (multi-agent env, the role it is the env of): the role views registered with gymnasium
ROLE_ENV_IDS: dict[str, tuple[str, str]] = {
    "SABench-Dialogue-v0": ("sabench_dialogue_v0", "assistant"),
}


def _module(name: str) -> Any:
    module = ENVS.get(name)
    if module is None:
        raise UnknownNameError("multi-agent env", name, list(ENVS))
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != "pettingzoo":
            raise
        raise EnvUsageError(
            "The multi-agent envs need PettingZoo: pip install 'tooltrap[multiagent]'."
        ) from None


def role_env(name: str, role: str = "assistant", **kwargs: Any) -> Any:
    """The single-agent Gymnasium env of ``role`` in multi-agent env ``name`` (the entry point of
    :data:`ROLE_ENV_IDS`): keywords named after another role give its policy (default: the env's
    scripted one), the others go to the env.

    Raises:
        UnknownNameError: ``name`` or ``role`` is unknown.
        EnvUsageError: PettingZoo is not installed, or the env has no single-agent view of ``role``.
    """
    loaded = _module(name)
    factory = getattr(loaded, f"{role}_env", None)
    if factory is None:
        raise EnvUsageError(f"{name} has no single-agent env of the role {role!r}.")
    return factory(**kwargs)


def make(name: str, *, aec: bool = False, **kwargs: Any) -> Any:
    """The multi-agent env ``name`` (a key of :data:`ENVS`): its ``parallel_env(**kwargs)``, or its
    ``env(**kwargs)`` (AEC) with ``aec=True``.

    Raises:
        UnknownNameError: ``name`` is not a tooltrap multi-agent env (with a did-you-mean).
        EnvUsageError: PettingZoo is not installed.
    """
    loaded = _module(name)
    return loaded.env(**kwargs) if aec else loaded.parallel_env(**kwargs)


__all__ = ["ENVS", "ROLE_ENV_IDS", "make", "role_env"]
