"""Discovers the template modules and generates the corpus."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

from .base import Template

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def templates(domain: str) -> list[Template]:
    """Every template of ``domain`` (modules of ``templates/<domain>/`` defining ``TEMPLATE``), by id."""
    package = importlib.import_module(f"{__package__}.{domain}")
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        template = getattr(module, "TEMPLATE", None)
        if isinstance(template, Template):
            if template.domain != domain:
                raise ValueError(
                    f"{module.__name__}: TEMPLATE.domain is {template.domain!r}, expected {domain!r}"
                )
            found.append(template)
    return sorted(found, key=lambda t: t.id)


def generate(domain: str) -> list[dict[str, Any]]:
    return [task for template in templates(domain) for task in template.tasks()]


def render(domain: str) -> str:
    """The packaged JSON text for ``domain`` (stable formatting, so diffs stay readable)."""
    return json.dumps({"tasks": generate(domain)}, indent=1, ensure_ascii=False) + "\n"


def write(domain: str) -> Path:
    path = DATA_DIR / f"{domain}.json"
    path.write_text(render(domain), encoding="utf-8")
    return path
