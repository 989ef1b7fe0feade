"""The layout's two rules, checked on the source: nothing imports upward (envs <- wrappers <- agents <-
training <- the package face), and generic code names no benchmark."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> its package (pyproject's package-dir)
PACKAGES = {
    "envs": "tooltrap.envs",
    "wrappers": "tooltrap.wrappers",
    "agents": "tooltrap.agents",
    "training": "tooltrap.training",
    "tooltrap": "tooltrap",
}
#: lowest first: a layer may import its own and the layers before it
LAYERS = ("tooltrap.envs", "tooltrap.wrappers", "tooltrap.agents", "tooltrap.training", "tooltrap")
BENCHMARKS = ("sabench", "episem", "sentry", "agentprop")
#: the benchmarks' names as code spells them (packages, classes, env ids)
BENCHMARK_NAME = re.compile(r"sabench|episem|sentry|agentprop|epi-sem", re.IGNORECASE)
#: defenses a paper defines (they may cite it by its benchmark's name); the defense framework may not
PAPER_DEFENSES = tuple(
    f"wrappers/defenses/{name}.py"
    for name in ("confirmation", "preview", "trust_gate", "detector", "interceptor")
)


def _module(path: Path) -> tuple[str, bool]:
    """The dotted module of a source file, and whether it is a package's ``__init__``."""
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.with_suffix("").parts[1:]]
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts).replace("tooltrap.tooltrap", "tooltrap"), is_package


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports (relative imports resolved), with its line."""
    module, is_package = _module(path)
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # ``from pkg import module`` imports the module too
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return found


def _layer(module: str) -> int | None:
    """The index in LAYERS of the layer a tooltrap module belongs to (None: not tooltrap's)."""
    for i, layer in enumerate(LAYERS[:-1]):
        if module == layer or module.startswith(layer + "."):
            return i
    if module == "tooltrap" or module.startswith("tooltrap."):
        return len(LAYERS) - 1
    return None


def _sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def test_the_import_walk_sees_relative_and_absolute_imports():
    """The checker itself: a relative import two levels up resolves, ``from pkg import mod`` counts."""
    path = ROOT / "wrappers" / "eval" / "sabench" / "report.py"
    imported = {name for _, name in _imports(path)}
    assert any(name.startswith("tooltrap.wrappers.eval.report") for name in imported)
    assert _layer("tooltrap.agents.llm") == 2 and _layer("tooltrap.cli") == 4 and _layer("json") is None


@pytest.mark.parametrize("folder", list(PACKAGES))
def test_nothing_imports_upward(folder):
    own = _layer(PACKAGES[folder])
    upward = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _sources(folder)
        for line, name in _imports(path)
        if (layer := _layer(name)) is not None and layer > own
    ]
    assert not upward, (
        "imports against the layers (envs <- wrappers <- agents <- training <- tooltrap):\n"
        + ("\n".join(upward))
    )


def _generic_sources() -> list[Path]:
    """envs/core, the multi-agent engine (envs/multiagent/ except a benchmark's folder, its env modules and
    the registry in __init__, which lists the envs by name as envs/packages.py lists the benchmarks),
    wrappers/ except wrappers/eval/<benchmark>/ and the paper-defined defenses, agents/, training/."""
    multiagent = [
        p
        for p in (ROOT / "envs" / "multiagent").glob("*.py")
        if p.name != "__init__.py" and not any(p.name.startswith(f"{b}_") for b in BENCHMARKS)
    ]
    sources = _sources("envs/core", "wrappers", "agents", "training") + sorted(multiagent)
    return [
        p
        for p in sources
        if not any(str(p.relative_to(ROOT)).startswith(f"wrappers/eval/{b}/") for b in BENCHMARKS)
        and str(p.relative_to(ROOT)) not in PAPER_DEFENSES
    ]


def test_generic_code_names_no_benchmark():
    named = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
        for path in _generic_sources()
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if BENCHMARK_NAME.search(line)
    ]
    assert not named, "generic code that names a benchmark:\n" + "\n".join(named)
