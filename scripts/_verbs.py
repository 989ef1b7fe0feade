"""One script per verb, taking a benchmark: ``python scripts/VERB.py BENCHMARK [ARGS ...]`` runs
``scripts/benchmarks/BENCHMARK/VERB.py`` with ``ARGS``, as if it had been called itself.

``BENCHMARK`` is the name of a benchmark folder (``sabench``, ``episem``, ``sentry``, ``agentprop``) or an
env id of that benchmark (``SABench-v0``), which is also passed on as the first argument where the
benchmark's script takes an env id. A benchmark without the verb gets a message naming those that have
it.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "benchmarks"


def _benchmark_of(name: str) -> tuple[str, bool]:
    """The benchmark folder ``name`` designates, and whether ``name`` was an env id."""
    if (FOLDER / name).is_dir():
        return name, False
    import tooltrap  # noqa: F401  (registers the env ids)
    from tooltrap.envs.packages import env_spec

    entry = str(env_spec(name).entry_point)
    return entry.split(":")[0].split(".")[2], True


def run(verb: str, argv: list[str], doc: str | None = None) -> int:
    """Run ``verb`` for the benchmark ``argv[0]`` with the rest of ``argv``; its exit status. ``doc``:
    the verb script's docstring (``--help`` shows its first paragraph)."""
    from _help import description

    have = sorted(p.parent.name for p in FOLDER.glob(f"*/{verb}.py"))
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: python scripts/{verb}.py BENCHMARK [ARGS ...]   (BENCHMARK: {', '.join(have)})")
        if doc:
            print(f"\n{description(doc)}\n")
        print(f"python scripts/{verb}.py BENCHMARK --help: the options of one benchmark's {verb}.")
        return 0 if argv else 2
    try:
        benchmark, is_env_id = _benchmark_of(argv[0])
    except Exception as exc:  # an unknown name: say which ones exist
        print(f"{verb}: {argv[0]!r} is no benchmark folder or env id ({exc}); choose from {', '.join(have)}")
        return 2
    script = FOLDER / benchmark / f"{verb}.py"
    if not script.exists():
        print(f"{verb}: {benchmark} has no {verb} script; the benchmarks with one: {', '.join(have)}")
        return 2
    sys.argv = [str(script), *(argv if is_env_id else argv[1:])]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0
