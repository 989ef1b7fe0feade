"""Env ids and their registration with gymnasium (idempotent)."""

from __future__ import annotations

import gymnasium as gym

_SABENCH = "tooltrap.envs.sabench.benchmark:SABenchEnv"

#: env id -> (entry point, kwargs). Only ids with a shipped corpus are registered.
ENV_IDS: dict[str, tuple[str, dict[str, object]]] = {
    "SABench-Email-v0": (_SABENCH, {"domain": "email"}),
    "SABench-Calendar-v0": (_SABENCH, {"domain": "calendar"}),
    "SABench-Ticket-v0": (_SABENCH, {"domain": "ticket"}),
    "SABench-v0": (_SABENCH, {"domain": "all"}),
}


def register_envs() -> None:
    """Register every tooltrap env id (safe to call more than once)."""
    for env_id, (entry_point, kwargs) in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs), disable_env_checker=True)


def check_env_id(env_id: str) -> str:
    """``env_id`` if gymnasium knows it (importing the module of a ``"module:Env-v0"`` id); otherwise an
    :class:`~tooltrap.envs.core.UnknownNameError` with a did-you-mean that ignores case."""
    import difflib
    import importlib

    from tooltrap.envs.core import UnknownNameError

    module, _, plain = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UnknownNameError("env module", module, []) from exc
    if plain in gym.registry:
        return env_id
    ids = list(gym.registry)
    lowered = {i.lower(): i for i in ids}
    close = [lowered[m] for m in difflib.get_close_matches(plain.lower(), list(lowered), n=3, cutoff=0.6)]
    error = UnknownNameError("env id", plain, [])
    hint = " Did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""
    ours = ", ".join(ENV_IDS)
    error.args = (f"Unknown env id {plain!r}.{hint} tooltrap's env ids: {ours}.",)
    raise error


def env_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """``gym.spec`` of an env id, also in the module-prefixed form ``"package.module:Env-v0"`` (the module
    is imported first, as ``gym.make`` does), with the entry point's module imported too."""
    import importlib

    module, _, plain = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    spec = gym.spec(plain or env_id)
    if isinstance(spec.entry_point, str):
        importlib.import_module(spec.entry_point.partition(":")[0])
    return spec
