"""Multi-agent variants of tooltrap's benchmarks (PettingZoo, the ``multiagent`` extra): the roles of a
benchmark (the assistant, the user, ...) as agents over the same engine as the single-agent envs.

Each env is a module named as PettingZoo names its envs, with ``parallel_env()``, ``env()`` and
``raw_env()`` factories::

    from tooltrap.envs.multiagent import sabench_dialogue_v0

    env = sabench_dialogue_v0.parallel_env(ambiguous=True)
    observations, infos = env.reset(seed=0)

``make("sabench_dialogue_v0", **kwargs)`` builds one by name (``aec=True`` for the AEC form);
:data:`ENVS` lists them. Importing this package is cheap; PettingZoo is imported with an env module.
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


def make(name: str, *, aec: bool = False, **kwargs: Any) -> Any:
    """The multi-agent env ``name`` (a key of :data:`ENVS`): its ``parallel_env(**kwargs)``, or its
    ``env(**kwargs)`` (AEC) with ``aec=True``.

    Raises:
        UnknownNameError: ``name`` is not a tooltrap multi-agent env (with a did-you-mean).
        EnvUsageError: PettingZoo is not installed.
    """
    module = ENVS.get(name)
    if module is None:
        raise UnknownNameError("multi-agent env", name, list(ENVS))
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != "pettingzoo":
            raise
        raise EnvUsageError(
            "The multi-agent envs need PettingZoo: pip install 'tooltrap[multiagent]'."
        ) from None
    return loaded.env(**kwargs) if aec else loaded.parallel_env(**kwargs)


__all__ = ["ENVS", "make"]
