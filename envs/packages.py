"""What a benchmark package declares when it is imported, kept cheap: its env ids (registered with
gymnasium here) and its public names, loaded from their rooms on first use.

``import tooltrap`` registers every env id without loading a benchmark: each ``envs/<benchmark>/__init__.py``
holds only data (``ENV_IDS``, ``ENTRY_POINT``, the names it exports and the room of each) and imports
nothing heavy, so this module reads them at registration and gymnasium imports the env class on the
first ``gym.make``. A benchmark outside this folder registers its own ids with ``gymnasium.register``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from types import ModuleType
from typing import Any

import gymnasium as gym

#: the benchmark packages shipped in ``tooltrap.envs``, in the order their env ids are listed
PACKAGES: tuple[str, ...] = ("sabench", "episem", "sentry", "agentprop")


class _BenchmarkPackage(ModuleType):
    """A benchmark package whose exported names win over its rooms of the same name: importing the room
    ``benchmark.py`` must not replace the exported function ``benchmark`` on the package (the import
    system sets a submodule as its parent's attribute; an eager ``from .benchmark import benchmark``
    used to overwrite it again)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and name in self.__dict__.get("_EXPORTS", ()):
            return
        super().__setattr__(name, value)


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` (PEP 562) that import each exported name from its
    room (``exports``: name -> relative module, e.g. ``".benchmark"``) the first time it is used, then keep
    it in the package's namespace."""
    module = sys.modules[package]
    module.__class__ = _BenchmarkPackage

    def __getattr__(name: str) -> Any:
        room = exports.get(name)
        if room is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(room, package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *exports})

    return __getattr__, __dir__


def _env_ids() -> dict[str, tuple[str, dict[str, object]]]:
    """env id -> (entry point, kwargs), from every shipped benchmark package."""
    found: dict[str, tuple[str, dict[str, object]]] = {}
    for name in PACKAGES:
        package = importlib.import_module(f"{__package__}.{name}")
        for env_id, kwargs in package.ENV_IDS.items():
            found[env_id] = (package.ENTRY_POINT, dict(kwargs))
    return found


def load_benchmarks() -> None:
    """Import every shipped benchmark's env module, which defines its ``Benchmark`` class (and so fills
    ``tooltrap.envs.core.BENCHMARKS``): for what lists them all, such as the reward vocabulary table."""
    for name in PACKAGES:
        package = importlib.import_module(f"{__package__}.{name}")
        importlib.import_module(package.ENTRY_POINT.partition(":")[0])


def env_ids_by_benchmark() -> dict[str, list[str]]:
    """Benchmark name -> its env ids, in the order the ids are registered (then the benchmarks without
    one): an env id belongs to the benchmark defined in the module of its entry point."""
    from .core import BENCHMARKS

    load_benchmarks()
    by_module = {cls.__module__: name for name, cls in BENCHMARKS.items()}
    out: dict[str, list[str]] = {}
    for env_id, (entry_point, _) in ENV_IDS.items():
        name = by_module.get(entry_point.partition(":")[0])
        if name is not None:
            out.setdefault(name, []).append(env_id)
    return {**out, **{name: [] for name in BENCHMARKS if name not in out}}


#: env id -> (entry point, kwargs). Only ids with a shipped corpus are registered.
ENV_IDS: dict[str, tuple[str, dict[str, object]]] = _env_ids()
#: the env id an integration plays when it is given none: the first benchmark's whole suite
DEFAULT_ENV_ID = "SABench-v0"


def register_envs() -> None:
    """Register every tooltrap env id (safe to call more than once): the benchmarks' and the role views
    of the multi-agent envs (``tooltrap.envs.multiagent.ROLE_ENV_IDS``; PettingZoo is imported by their
    first ``gym.make``)."""
    from .multiagent import ROLE_ENV_IDS

    roles = {
        env_id: ("tooltrap.envs.multiagent:role_env", {"name": name, "role": role})
        for env_id, (name, role) in ROLE_ENV_IDS.items()
    }
    for env_id, (entry_point, kwargs) in {**ENV_IDS, **roles}.items():
        if env_id in gym.registry:
            continue
        gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs), disable_env_checker=True)


def _plain_id(env_id: str) -> str:
    """The id of a ``"package.module:Env-v0"`` env id without its module, which is imported first (as
    ``gym.make`` does); a plain id as it is."""
    module, _, plain = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    return plain


def check_env_id(env_id: str) -> str:
    """``env_id`` if gymnasium knows it; otherwise an :class:`~tooltrap.envs.core.UnknownNameError` with a
    did-you-mean that ignores case."""
    from tooltrap.envs.core import UnknownNameError

    module = env_id.rpartition(":")[0]
    try:
        plain = _plain_id(env_id)
    except ImportError as exc:
        raise UnknownNameError("env module", module, []) from exc
    if plain in gym.registry:
        return env_id
    hint = f"tooltrap's env ids: {', '.join(ENV_IDS)}."
    raise UnknownNameError("env id", plain, gym.registry, hint=hint, ignore_case=True)


def registered_env_id(env_id: str, *, allow_modules: Collection[str] = ()) -> str:
    """``env_id`` as a file names it (a run folder's run.json), resolved among the env ids already
    registered, importing nothing the file names: the plain id (``"module:Env-v0"`` without its
    module). A module-prefixed id is accepted only when its module is in ``allow_modules`` (imported by
    the caller, who chose to trust it) or imported already, so opening someone else's run folder never
    runs their code.

    Raises:
        EnvUsageError: The id names a module that is not allowed.
        UnknownNameError: The id is not registered (its benchmark's module was not imported).
    """
    from tooltrap.envs.core import EnvUsageError, UnknownNameError

    module, _, plain = env_id.rpartition(":")
    # a module this process has imported already runs no code when named again
    if module and module not in allow_modules and module not in sys.modules:
        raise EnvUsageError(
            f"the env id {env_id!r} names the module {module!r}, which would have to be imported (its code "
            f"run) to read this run; nothing a run folder names is imported: pass --allow-module {module} "
            "if you trust it."
        )
    if plain not in gym.registry:
        raise UnknownNameError(
            "env id",
            plain,
            gym.registry,
            hint="Only registered env ids are read from a run folder: pass --allow-module MODULE for the "
            "module that registers it.",
        )
    return plain


def env_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """``gym.spec`` of an env id, also in the module-prefixed form ``"package.module:Env-v0"``, with the
    entry point's module imported too."""
    spec = gym.spec(_plain_id(env_id))
    if isinstance(spec.entry_point, str):
        importlib.import_module(spec.entry_point.partition(":")[0])
    return spec
