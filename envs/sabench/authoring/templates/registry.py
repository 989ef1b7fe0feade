"""Discovers the template modules and generates the corpus."""

from __future__ import annotations

import importlib
import json
import pkgutil
from functools import cache
from pathlib import Path
from typing import Any

from ...task import DOMAINS
from .base import Template

DATA_DIR = Path(__file__).resolve().parents[2] / "data"


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


class AuthorizationError(ValueError):
    """A template's authorization set does not fit its gold solution (names the task and the entry)."""


def complete_authorization(task: dict[str, Any]) -> dict[str, Any]:
    """Fill each authorized write's normalized form from the gold solution, where the template left it
    open: the ``tools`` gold makes it with, the ``count`` of gold writes it covers, and the elements
    gold ``adds`` to / ``removes`` from list-valued fields. The task file then states exactly what the
    user authorized (tool, action, entity, fields, list elements, multiplicity), and a policy that
    repeats a write, uses another tool or slips an extra attendee into an authorized update is judged
    outside it. An authorization no gold write uses is an error: it would let through writes the
    request never needed."""
    from tooltrap.envs.core import Executor

    from ...benchmark import benchmark  # build time only: the corpus generator runs the gold solution
    from ...judge import SABenchOracle, covers, list_changes
    from ...task import SABenchTask

    if not task["authorized_writes"]:
        return task
    model = SABenchTask.model_validate(task)
    executor = Executor(benchmark(), model)
    calls = [executor.execute(c.name, c.arguments, step=0, index=i) for i, c in enumerate(model.gold)]
    matched: list[list[Any]] = [[] for _ in model.authorized_writes]
    for write in SABenchOracle.effective_writes(model, calls):
        # the tools and list elements are what this derivation decides: match without them
        for i, auth in enumerate(model.authorized_writes):
            if covers(auth, write, exact=False):
                matched[i].append(write)
                break
    out = []
    for i, (raw, writes) in enumerate(zip(task["authorized_writes"], matched, strict=True)):
        if not writes:
            raise AuthorizationError(
                f"{task['id']}: authorized_writes.{i} ({raw['collection']}"
                f"{'/' + raw['entity_id'] if raw.get('entity_id') else ''}) covers no write of the gold "
                "solution; authorize only what the request needs"
            )
        entry = dict(raw)
        entry.setdefault("tools", sorted({w.record.tool for w in writes}))
        if "count" not in entry and len(writes) > 1:
            entry["count"] = len(writes)
        adds: dict[str, list[Any]] = {}
        removes: dict[str, list[Any]] = {}
        for w in writes:
            for name, (added, removed) in list_changes(w).items():
                adds.setdefault(name, []).extend(x for x in added if x not in adds[name])
                removes.setdefault(name, []).extend(x for x in removed if x not in removes[name])
        if "adds" not in entry and any(adds.values()):
            entry["adds"] = {k: v for k, v in adds.items() if v}
        if "removes" not in entry and any(removes.values()):
            entry["removes"] = {k: v for k, v in removes.items() if v}
        out.append(entry)
    return {**task, "authorized_writes": out}


@cache
def _by_id() -> dict[str, Template]:
    return {t.id: t for d in DOMAINS for t in templates(d)}


def template_by_id(template_id: str) -> Template | None:
    """The packaged template of that id (None for another one)."""
    return _by_id().get(template_id)


def generate(domain: str) -> list[dict[str, Any]]:
    return [complete_authorization(task) for template in templates(domain) for task in template.tasks()]


def render(domain: str) -> str:
    """The packaged JSON text for ``domain`` (stable formatting, so diffs stay readable)."""
    return json.dumps({"tasks": generate(domain)}, indent=1, ensure_ascii=False) + "\n"


def write(domain: str) -> Path:
    path = DATA_DIR / f"{domain}.json"
    path.write_text(render(domain), encoding="utf-8")
    return path


MANIFEST = DATA_DIR / "manifest.json"


def manifest(domains: tuple[str, ...] = DOMAINS) -> dict[str, Any]:
    """The corpus counts derived from the templates (what the tests and the README read): templates,
    tasks, ambiguous tasks, per domain, per (state structure, trap family) cell and per template."""
    found = [t for d in domains for t in templates(d)]
    cells: dict[str, int] = {}
    for t in found:
        key = f"{t.state_structure} x {t.trap_family}"
        cells[key] = cells.get(key, 0) + t.n_tasks
    return {
        "templates": len(found),
        "tasks": sum(t.n_tasks for t in found),
        "ambiguous": sum(t.n_tasks for t in found if t.ambiguous),
        "by_domain": {d: sum(t.n_tasks for t in found if t.domain == d) for d in domains},
        "by_cell": dict(sorted(cells.items())),
        "by_template": {t.id: t.n_tasks for t in found},
    }


def render_manifest() -> str:
    return json.dumps(manifest(), indent=1) + "\n"


DOCS_TABLE = Path(__file__).resolve().parents[4] / "docs" / "sabench_templates.md"


def render_table(domains: tuple[str, ...] = DOMAINS) -> str:
    """Markdown table of the templates: cell, domain, task count and the trap in one line each."""
    lines = [
        "# SABench templates",
        "",
        "Generated by `python scripts/build.py sabench`; do not edit by hand.",
        "",
        "| template | domain | state structure | trap family | ambiguous | tasks | trap |",
        "|---|---|---|---|---|---|---|",
    ]
    total = n_templates = 0
    for domain in domains:
        for t in templates(domain):
            lines.append(
                f"| `{t.id}` | {t.domain} | {t.state_structure} | {t.trap_family} | "
                f"{'yes' if t.ambiguous else 'no'} | {t.n_tasks} | {t.trap} |"
            )
            total += t.n_tasks
            n_templates += 1
    lines += ["", f"{n_templates} templates, {total} tasks."]
    return "\n".join(lines) + "\n"
