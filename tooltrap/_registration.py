"""The package face's registration: the env ids (declared by each benchmark package, registered by
:mod:`tooltrap.envs.packages`) and the built-in benchmarks' evaluation packages (their reports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltrap.envs.packages import env_spec

if TYPE_CHECKING:
    from tooltrap.wrappers.eval.report import BenchmarkReport

#: benchmark name -> the module of its evaluation package that registers its report object (imported
#: on first use: a run folder names its benchmark, and only that benchmark's report is loaded)
REPORT_MODULES: dict[str, str] = {
    "sabench": "tooltrap.wrappers.eval.sabench.report",
    "episem": "tooltrap.wrappers.eval.episem.report",
    "sentry": "tooltrap.wrappers.eval.sentry.report",
    "agentprop": "tooltrap.wrappers.eval.agentprop.report",
    # the multi-agent envs' per-role reports (their runs' records name the env as their benchmark)
    "sabench_dialogue_v0": "tooltrap.wrappers.eval.sabench.dialogue",
    "sentry_arena_v0": "tooltrap.wrappers.eval.sentry.arena",
}


def benchmark_report(benchmark: str, env_id: str | None = None) -> BenchmarkReport:
    """The report of the benchmark named ``benchmark`` (as a run's records and run.json name it): a
    built-in benchmark's evaluation package is imported (it registers its report); a user's benchmark
    is imported through ``env_id``'s entry point (its module registers its report, if it has one)."""
    import importlib

    from tooltrap.envs.core import BENCHMARKS
    from tooltrap.wrappers.eval.report import report_for

    if benchmark in REPORT_MODULES:
        importlib.import_module(REPORT_MODULES[benchmark])
    elif benchmark not in BENCHMARKS and env_id:
        env_spec(env_id)  # imports the env's modules, which define (and register) the benchmark
    return report_for(benchmark)
