"""Reports for any benchmark: load run folders, find the benchmark's report, summarize and write.

A benchmark's evaluation package registers its report object (:func:`register_report`, keyed by the
benchmark class or its name); without one, :class:`RateReport` computes the rates the benchmark
declares in ``Benchmark.metrics`` (an outcome and a denominator over the verdict's boolean fields) with
cluster-bootstrap intervals (clusters: ``Benchmark.cluster_by``), overall and per variant.
``tooltrap eval`` writes and prints :func:`summary_of` (:meth:`BenchmarkReport.summarize`);
``tooltrap report DIR ...`` writes :meth:`BenchmarkReport.write`. Episodes ended by the provider
(errors, content filters) are system-level outcomes: counted apart, never in a denominator. The run
folders themselves are read through :mod:`.run`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypedDict

import numpy as np

from tooltrap.envs.core import BENCHMARKS, Benchmark, EnvUsageError, UnknownNameError, variant_key

from .bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    cluster_sums,
    ratio_intervals,
    resample_counts,
)
from .run import EPISODES, RUN, RunFolderError, read_episodes, read_run_info, record_point, run_name


class BenchmarkReport:
    """What ``tooltrap eval`` prints and ``tooltrap report`` writes for one benchmark.

    ``runs`` map a display name to that run's episode records (the lines of its episodes.jsonl).
    """

    #: what the bootstrap resamples (shown in table headers)
    cluster_label: str = "cluster"
    #: verdict fields whose running rates the progress bar shows
    progress_outcomes: tuple[str, ...] = ()
    #: summary metrics that are not rates (shown as plain numbers, not percentages)
    plain_metrics: tuple[str, ...] = ()
    #: the viewer's hooks (``tooltrap view``: outcome columns, labels, findings; a
    #: :class:`~.view.hooks.ViewHooks`); None: the generic view
    view: Any = None

    def summarize(
        self,
        records: Sequence[dict[str, Any]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> dict[str, Interval]:
        """The headline metrics of one run (``summary.json``)."""
        raise NotImplementedError

    def build(
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> Any:
        raise NotImplementedError

    def write(self, report: Any, out_dir: str | Path, *, figures: bool = True) -> list[Path]:
        """Write :meth:`files` into ``out_dir`` (created), then :meth:`figures` when asked; the paths."""
        paths = write_texts(out_dir, self.files(report))
        if figures:
            paths += self.figures(report, Path(out_dir))
        return paths

    def files(self, report: Any) -> dict[str, str]:
        """The text files of a built report: file name -> content (see :func:`report_files`)."""
        raise NotImplementedError

    def figures(self, report: Any, out_dir: Path) -> list[Path]:
        """Write the report's figures into ``out_dir``; the paths (none by default)."""
        return []

    def print_terminal(self, report: Any) -> None:
        raise NotImplementedError


def _model_level(records: Sequence[dict[str, Any]]) -> np.ndarray:
    return np.array([not r.get("system_outcome") for r in records], dtype=bool)


def print_metric_table(
    title: str, runs: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]], *, width: int = 220
) -> None:
    """A terminal table with one row per metric and one column per run (``rows``: label, cells)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("metric")
    for name in runs:
        table.add_column(name, justify="right")
    for label, cells in rows:
        table.add_row(label, *cells)
    Console(width=width).print(table)


def system_outcome_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Episodes ended by the provider (errors, timeouts, content filters), by kind, sorted."""
    counts = Counter(r["system_outcome"] for r in records if r.get("system_outcome"))
    return dict(sorted(counts.items()))


#: the columns of every report's metrics.csv (long format)
CSV_FIELDS = ("run", "scope", "group", "metric", "value", "ci_low", "ci_high", "n")


def rates_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """metrics.csv: one row per (run, scope, group, metric) with its interval."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def json_safe(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row with NaN (an empty denominator) as None, so report.json stays valid JSON."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}


class MetricRow(TypedDict):
    """One row of a report's table (metrics.csv, and the ``rates`` of report.json): a metric of a run
    in a scope (overall, a breakdown, a level) and group, with its interval. Rows that are counts,
    not intervals, leave ``ci_low`` / ``ci_high`` empty."""

    run: str
    scope: str
    group: str
    metric: str
    value: float
    ci_low: float | str
    ci_high: float | str
    n: int


class IntervalLike(Protocol):
    """A value with its interval and n (:class:`~.bootstrap.Interval`, a benchmark's own rate type)."""

    value: float
    ci_low: float
    ci_high: float
    n: int


def metric_row(run: str, scope: str, group: str, metric: str, interval: IntervalLike) -> MetricRow:
    """The table row of one metric's interval."""
    return {
        "run": run,
        "scope": scope,
        "group": group,
        "metric": metric,
        "value": interval.value,
        "ci_low": interval.ci_low,
        "ci_high": interval.ci_high,
        "n": interval.n,
    }


def report_files(
    markdown_name: str,
    markdown: str,
    rows: Sequence[MetricRow],
    document: Mapping[str, Any],
    *,
    allow_nan: bool = True,
    **more: str,
) -> dict[str, str]:
    """The files every report writes, in this order: its Markdown (``markdown_name``), metrics.csv
    (``rows``), report.json (``document``; with ``allow_nan=False`` a NaN left in it is an error) and
    then ``more`` (file name -> text)."""
    return {
        markdown_name: markdown,
        "metrics.csv": rates_csv(rows),
        "report.json": json.dumps(document, indent=1, allow_nan=allow_nan) + "\n",
        **more,
    }


def split_run_name(name: str) -> tuple[str, str]:
    """(agent, defense) of a run's display name ``agent+defense`` (:func:`.run.run_name`); the defense is
    ``none`` when the name has none."""
    agent, _, defense = name.partition("+")
    return agent, defense or "none"


def pyplot() -> Any | None:
    """matplotlib's pyplot on the file-only Agg backend, or None when matplotlib (the ``plot`` extra)
    is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def write_texts(out_dir: str | Path, files: Mapping[str, str]) -> list[Path]:
    """Write each ``name -> text`` into ``out_dir`` (created); the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return [out / name for name in files]


@dataclass
class RateRun:
    name: str
    n_episodes: int
    rates: dict[tuple[str, str, str], Interval] = field(default_factory=dict)  # (scope, group, metric)
    system_outcomes: dict[str, int] = field(default_factory=dict)


@dataclass
class RateTables:
    benchmark: str
    metrics: list[str]
    runs: list[RateRun]
    n_resamples: int
    seed: int
    cluster_label: str


class RateReport(BenchmarkReport):
    """The generic report: the benchmark's declared rates, overall and per variant, each with a
    cluster-bootstrap interval (95%, seeded).

    Args:
        name: The benchmark's name (report titles).
        metrics: metric -> (outcome field, denominator field or None): booleans of the verdict.
        cluster_by: The verdict (or record) field whose values are the bootstrap clusters.
    """

    def __init__(
        self, name: str, metrics: dict[str, tuple[str, str | None]], cluster_by: str = "template_id"
    ):
        if not metrics:
            raise EnvUsageError(
                f"Benchmark {name!r} declares no metrics (Benchmark.metrics) and registers no report (register_report)."
            )
        self.name = name
        self.metrics = dict(metrics)
        self.cluster_by = cluster_by
        self.cluster_label = cluster_by.removesuffix("_id")
        self.progress_outcomes = tuple(o for o, d in self.metrics.values() if d is None)[:2]

    def _column(self, records: Sequence[dict[str, Any]], column: str) -> np.ndarray:
        return np.array([bool(r["verdict"].get(column, r.get(column))) for r in records], dtype=bool)

    def _rates(
        self, records: Sequence[dict[str, Any]], scope: str, group: str, n_resamples: int, seed: int
    ) -> dict[tuple[str, str, str], Interval]:
        level = _model_level(records)
        labels = [str(r["verdict"].get(self.cluster_by, r.get(self.cluster_by, ""))) for r in records]
        index = {label: i for i, label in enumerate(sorted(set(labels)))}
        clusters = np.array([index[label] for label in labels], dtype=np.int64)
        k = len(index)
        num = np.zeros((k, len(self.metrics)))
        den = np.zeros((k, len(self.metrics)))
        for j, (outcome, denominator) in enumerate(self.metrics.values()):
            mask = level & self._column(records, denominator) if denominator else level
            num[:, j], den[:, j] = cluster_sums(self._column(records, outcome), mask, clusters, k)
        intervals = ratio_intervals(num, den, resample_counts(k, n_resamples, seed))
        return {(scope, group, m): iv for m, iv in zip(self.metrics, intervals, strict=True)}

    def summarize(
        self,
        records: Sequence[dict[str, Any]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> dict[str, Interval]:
        rates = self._rates(records, "overall", "all", n_resamples, seed) if records else {}
        return {metric: iv for (_, _, metric), iv in rates.items()}

    def build(
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> RateTables:
        out = []
        for name, records in runs.items():
            level = _model_level(records)
            run = RateRun(name, int(level.sum()))
            run.rates.update(self._rates(records, "overall", "all", n_resamples, seed))
            by_variant: dict[str, list[dict[str, Any]]] = {}
            for r in records:  # by the grid point asked for (a task-dependent default is no group)
                by_variant.setdefault(variant_key(record_point(r)), []).append(r)
            if len(by_variant) > 1:
                for key, group in sorted(by_variant.items()):
                    run.rates.update(self._rates(group, "by_variant", key, n_resamples, seed))
            run.system_outcomes = system_outcome_counts(records)
            out.append(run)
        return RateTables(self.name, list(self.metrics), out, n_resamples, seed, self.cluster_label)

    def files(self, report: RateTables) -> dict[str, str]:
        rows = [
            metric_row(run.name, s, g, m, iv) for run in report.runs for (s, g, m), iv in run.rates.items()
        ]
        document = {
            "benchmark": report.benchmark,
            "n_resamples": report.n_resamples,
            "seed": report.seed,
            "metrics": {m: {"outcome": o, "denominator": d or "all"} for m, (o, d) in self.metrics.items()},
            "runs": [
                {"name": r.name, "n_episodes": r.n_episodes, "system_outcomes": r.system_outcomes}
                for r in report.runs
            ],
            "rates": [json_safe(row) for row in rows],
        }
        return report_files("report.md", self.markdown(report), rows, document)

    def markdown(self, report: RateTables) -> str:
        header = ["run", "n", *report.metrics]
        lines = [
            f"# {report.benchmark} report",
            "",
            f"Rates in %, with 95% {report.cluster_label}-clustered bootstrap intervals "
            f"({report.n_resamples:,} resamples, seed {report.seed}).",
            "",
            "## Overall",
            "",
            md_table(
                header,
                [
                    [
                        r.name,
                        str(r.n_episodes),
                        *(percent(r.rates[("overall", "all", m)]) for m in report.metrics),
                    ]
                    for r in report.runs
                ],
            ),
            "",
            "System-level outcomes (provider errors, content filters; excluded from every rate): "
            + "; ".join(f"{r.name}: {sum(r.system_outcomes.values())}" for r in report.runs),
            "",
        ]
        variants = sorted({g for r in report.runs for (s, g, _) in r.rates if s == "by_variant"})
        if variants:
            lines += ["## By variant", ""]
            rows = []
            for r in report.runs:
                for v in variants:
                    if ("by_variant", v, report.metrics[0]) in r.rates:
                        rows.append(
                            [r.name, v, *(percent(r.rates[("by_variant", v, m)]) for m in report.metrics)]
                        )
            lines += [md_table(["run", "variant", *report.metrics], rows), ""]
        return "\n".join(lines)

    def print_terminal(self, report: RateTables) -> None:
        from rich.console import Console
        from rich.table import Table

        table = Table(
            title=f"{report.benchmark}: % [95% {report.cluster_label}-bootstrap CI], {report.n_resamples:,} resamples"
        )
        table.add_column("run")
        for m in report.metrics:
            table.add_column(m, justify="right")
        for r in report.runs:
            table.add_row(
                r.name, *(percent(r.rates[("overall", "all", m)], short=True) for m in report.metrics)
            )
        Console().print(table)


def percent(iv: Interval, short: bool = False) -> str:
    """A rate in % with its interval (``-`` when the denominator is empty)."""
    if math.isnan(iv.value):
        return "-"
    if short:
        return f"{100 * iv.value:.1f} [{100 * iv.ci_low:.0f},{100 * iv.ci_high:.0f}]"
    return f"{100 * iv.value:.1f} [{100 * iv.ci_low:.1f}, {100 * iv.ci_high:.1f}]"


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# -- the registry ------------------------------------------------------------------------------------
_REPORTS: dict[str, BenchmarkReport] = {}


def _benchmark_name(benchmark: str | type[Benchmark] | Benchmark) -> str:
    if isinstance(benchmark, str):
        return benchmark
    return benchmark.name if isinstance(benchmark, type) else type(benchmark).name


def register_report(benchmark: str | type[Benchmark], report: BenchmarkReport) -> BenchmarkReport:
    """Make ``report`` the report of ``benchmark`` (its class or name); returns ``report``. A
    benchmark's evaluation package calls this when it is imported; a later call replaces the entry."""
    _REPORTS[_benchmark_name(benchmark)] = report
    return report


def report_for(benchmark: str | type[Benchmark] | Benchmark) -> BenchmarkReport:
    """The report of a benchmark (by name, class or instance): the one registered for it, or the
    generic :class:`RateReport` over its declared ``metrics``. The benchmark's modules (and the
    package that registers its report) must be imported first."""
    name = _benchmark_name(benchmark)
    registered = _REPORTS.get(name)
    if registered is not None:
        return registered
    if isinstance(benchmark, str):
        try:
            cls = BENCHMARKS[name]
        except KeyError:
            raise UnknownNameError("benchmark", name, BENCHMARKS) from None
    else:
        cls = benchmark if isinstance(benchmark, type) else type(benchmark)
    return _REPORTS.setdefault(name, RateReport(cls.name, cls.metrics, cls.cluster_by))


def summary_of(
    report: BenchmarkReport,
    records: Sequence[dict[str, Any]],
    *,
    n_resamples: int | None = None,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """A run's ``summary.json``: each headline metric's interval (``n_resamples`` bootstrap resamples;
    None: the report's own default), then the system-level outcomes (how many, by kind)."""
    options: dict[str, int] = (
        {"seed": seed} if n_resamples is None else {"seed": seed, "n_resamples": n_resamples}
    )
    summary: dict[str, Any] = {
        name: iv.to_dict() for name, iv in report.summarize(records, **options).items()
    }
    system = system_outcome_counts(records)
    summary["system_outcomes"] = {"n": sum(system.values()), "by_kind": system}
    return summary


# -- run folders ---------------------------------------------------------------------------------------
def load_records(
    dirs: Sequence[str | Path], names: Sequence[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Episode records of each run folder, keyed by a unique display name."""
    out: dict[str, list[dict[str, Any]]] = {}
    for i, d in enumerate(dirs):
        path = Path(d)
        records = read_episodes(path / EPISODES)
        if not records:
            raise FileNotFoundError(
                f"{path}: no episodes.jsonl records (run `tooltrap eval ... --out {path}` first)"
            )
        name = names[i] if names else run_name(path)
        base, k = name, 2
        while name in out:
            name, k = f"{base}#{k}", k + 1
        out[name] = records
    return out


def run_benchmark(
    directory: str | Path, records: Sequence[dict[str, Any]], *, allow_modules: Collection[str] = ()
) -> tuple[str, str | None]:
    """(benchmark name, env id) of a run folder: from its records and run.json (runs written before
    records named their benchmark are found through the env id). The env id is resolved among the
    registered ids only (:func:`~tooltrap.envs.packages.registered_env_id`): nothing a run folder
    names is imported, except the modules of ``allow_modules``, which the caller imports first.

    Raises:
        RunFolderError: run.json is unreadable or holds values of the wrong type.
        EnvUsageError: No benchmark can be found, or the env id names a module not allowed.
    """
    from tooltrap.envs.packages import registered_env_id

    info = read_run_info(directory)
    env_id = info.get("env_id")
    if env_id is not None and not isinstance(env_id, str):
        raise RunFolderError(f"{Path(directory) / RUN}: env_id is a {type(env_id).__name__}, not a string")
    named = [r.get("benchmark") for r in records if r.get("benchmark")] or [info.get("benchmark")]
    name = named[0]
    if name is not None and not isinstance(name, str):
        raise RunFolderError(f"{directory}: the benchmark's name is a {type(name).__name__}, not a string")
    from tooltrap.envs.multiagent import ENVS as MULTIAGENT_ENVS

    # a multi-agent env is no gymnasium id: its records name it as their benchmark (its report's key)
    multiagent = env_id in MULTIAGENT_ENVS
    plain = registered_env_id(env_id, allow_modules=allow_modules) if env_id and not multiagent else None
    if name is None and plain is not None:
        import gymnasium as gym

        env = gym.make(plain)  # a registered id: the code that registered it is trusted
        name = env.unwrapped.benchmark.name  # type: ignore[attr-defined]
        env.close()
    if name is None:
        raise EnvUsageError(f"{directory}: cannot tell which benchmark this run belongs to (no run.json).")
    return name, plain
