"""EpiSEM's domain backends, one module per domain (its tools over its records). A domain's families
live in ``envs/episem/authoring/families/<domain>/``. Adding a domain: a module here with a ``BACKEND`` class,
its name in :data:`DOMAINS`, and a folder of families."""

from __future__ import annotations

from importlib import import_module

from tooltrap.envs.core import Backend

#: domain -> the module that defines its backend (the env id suffix is in ``tooltrap._registration``)
DOMAINS: tuple[str, ...] = (
    "cloudops",
    "commerce",
    "communication",
    "document_access",
    "finance",
    "travel",
)


def domain_backends() -> tuple[type[Backend], ...]:
    """Every domain's backend class, in :data:`DOMAINS` order (domains without a module yet skipped)."""
    out = []
    for domain in DOMAINS:
        try:
            module = import_module(f"{__name__}.{domain}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{domain}":
                raise
            continue
        out.append(module.BACKEND)
    return tuple(out)
