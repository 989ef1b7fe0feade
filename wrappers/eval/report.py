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

import json
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

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
from .run import (
    EPISODES,
    RUN,
    RunFolderError,
    folder_names,
    read_episodes,
    read_run_info,
    record_point,
    run_identity,
)
from .table import Cell, Column, Estimate, IntervalLike, Kind, Table, count, number, print_tables, rate, text


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

    def column(self, metric: str) -> Column:
        """How a summary metric is shown (``tooltrap eval``'s table): a rate, or a number when it is
        one of :attr:`plain_metrics`."""
        return number(metric) if metric in self.plain_metrics else rate(metric)

    def build(
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
        identities: Mapping[str, tuple[str, str]] | None = None,
    ) -> Any:
        """The report of ``runs`` (display name -> records); ``identities``: each run's (agent, defense)
        (:func:`load_identities`; default: read from names ``agent+defense``, :func:`identity`)."""
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


def metric_table(
    title: str,
    runs: Sequence[str],
    rows: Iterable[tuple[str, Column, Sequence[Cell]]],
    *,
    caption: str = "",
) -> Table:
    """A table with one row per metric and one column per run (``rows``: the metric's label, the
    :class:`~.table.Column` that says how the metric is shown, one cell per run)."""
    table = Table(title, [text("metric"), *(Column(name, Kind.ROW) for name in runs)], caption=caption)
    for label, column, cells in rows:
        table.add(label, *cells, row=column)
    return table


def system_outcome_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Episodes ended by the provider (errors, timeouts, content filters), by kind, sorted."""
    counts = Counter(r["system_outcome"] for r in records if r.get("system_outcome"))
    return dict(sorted(counts.items()))


#: the columns of every report's metrics.csv (long format)
CSV_FIELDS = ("run", "scope", "group", "metric", "value", "ci_low", "ci_high", "n")
#: the ``scope`` of a metrics.csv row covering every model-level episode of a run
OVERALL = "overall"
#: the ``scope`` of a row computed over every episode, provider-stopped ones counted (not only the
#: model-level ones)
SYSTEM_LEVEL = "system_level"


def by(axis: str) -> str:
    """The ``scope`` of a breakdown: ``by_<axis>`` (the row's ``group`` is the axis's value)."""
    return f"by_{axis}"


def rates_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """metrics.csv: one row per (run, scope, group, metric) with its interval, the same vocabulary for
    every benchmark:

    * ``run``: the run's display name (its folder's name in ``tooltrap report``)
    * ``scope``: which episodes the number is over: ``overall`` (every model-level episode of the run;
      ``group`` is ``all``, or a role of a multi-agent env), ``by_<axis>`` (the episodes with one value
      of a breakdown axis: ``by_variant``, ``by_injection``, ``by_trap_family`` ...; ``group`` is the
      value), ``system_level`` (every episode, provider-stopped ones counted), or a benchmark's own
      analysis named by what it is (``funnel``: a stage's share of the recoverable rollouts;
      ``external_only``: CD under the external-only policy; ``pairwise_difference``: run A - run B),
      broken down as ``<analysis>_by_<axis>``
    * ``metric``, ``value`` (a rate as a fraction, a mean as is), ``ci_low`` / ``ci_high`` (the 95%
      interval; empty for counts) and ``n`` (the denominator)
    """
    table = Table(
        "metrics",
        [*(text(name) for name in CSV_FIELDS[:4]), *(number(name) for name in CSV_FIELDS[4:7]), count("n")],
    )
    for row in rows:
        table.add(*(row[name] for name in CSV_FIELDS))
    return table.csv()


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
    for name, content in files.items():
        (out / name).write_text(content, encoding="utf-8")
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
        rates = self._rates(records, OVERALL, "all", n_resamples, seed) if records else {}
        return {metric: iv for (_, _, metric), iv in rates.items()}

    def build(
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
        identities: Mapping[str, tuple[str, str]] | None = None,
    ) -> RateTables:
        out = []
        for name, records in runs.items():
            level = _model_level(records)
            run = RateRun(name, int(level.sum()))
            run.rates.update(self._rates(records, OVERALL, "all", n_resamples, seed))
            by_variant: dict[str, list[dict[str, Any]]] = {}
            for r in records:  # by the grid point asked for (a task-dependent default is no group)
                by_variant.setdefault(variant_key(record_point(r)), []).append(r)
            if len(by_variant) > 1:
                for key, group in sorted(by_variant.items()):
                    run.rates.update(self._rates(group, by("variant"), key, n_resamples, seed))
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

    def tables(self, report: RateTables) -> list[Table]:
        """The overall table (a row per run) and, when a run spans several grid points, the table by
        variant (a row per run and variant)."""
        overall = Table(
            "Overall",
            [text("run"), count("n"), *(rate(m) for m in report.metrics), count("system-level outcomes")],
            caption="n: model-level episodes; system-level outcomes (provider errors, content filters) are "
            "excluded from every rate.",
        )
        for r in report.runs:
            overall.add(
                r.name,
                r.n_episodes,
                *(Estimate.of(r.rates[(OVERALL, "all", m)]) for m in report.metrics),
                sum(r.system_outcomes.values()),
            )
        out = [overall]
        variants = sorted({g for r in report.runs for (s, g, _) in r.rates if s == by("variant")})
        if variants:
            table = Table("By variant", [text("run"), text("variant"), *(rate(m) for m in report.metrics)])
            for r in report.runs:
                for v in variants:
                    if (by("variant"), v, report.metrics[0]) in r.rates:
                        table.add(
                            r.name, v, *(Estimate.of(r.rates[(by("variant"), v, m)]) for m in report.metrics)
                        )
            out.append(table)
        return out

    def markdown(self, report: RateTables) -> str:
        lines = [
            f"# {report.benchmark} report",
            "",
            f"Rates in %, with 95% {report.cluster_label}-clustered bootstrap intervals "
            f"({report.n_resamples:,} resamples, seed {report.seed}).",
            "",
        ]
        for table in self.tables(report):
            lines += [f"## {table.title}", "", table.markdown(), ""]
        return "\n".join(lines)

    def print_terminal(self, report: RateTables) -> None:
        overall = self.tables(report)[0]
        overall.title = f"{report.benchmark}: % [95% {report.cluster_label}-bootstrap CI], {report.n_resamples:,} resamples"
        print_tables([overall])


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
    """Episode records of each run folder, keyed by its display name: ``names`` when given, else the
    folder's name (:func:`.run.folder_names`: unique, a parent folder added where two share one)."""
    out: dict[str, list[dict[str, Any]]] = {}
    shown = list(names) if names else folder_names(dirs)
    for name, d in zip(shown, dirs, strict=True):
        path = Path(d)
        records = read_episodes(path / EPISODES)
        if not records:
            raise FileNotFoundError(
                f"{path}: no episodes.jsonl records (run `tooltrap eval ... --out {path}` first)"
            )
        if name in out:
            raise EnvUsageError(f"two runs are named {name!r}: give each its own name")
        out[name] = records
    return out


def load_identities(dirs: Sequence[str | Path], names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Display name -> (agent, defense) of each run folder, from its run.json (:func:`.run.run_identity`):
    what a report groups runs by (an agent's runs under each defense), whatever the folders are called."""
    return {name: run_identity(d) for name, d in zip(names, dirs, strict=True)}


def identity(name: str, identities: Mapping[str, tuple[str, str]] | None) -> tuple[str, str]:
    """(agent, defense) of the run ``name``: from ``identities`` (:func:`load_identities`) when it has
    the run, else from a name of the form ``agent+defense`` (the scripts' names; defense ``none`` when
    it has no ``+``)."""
    if identities and name in identities:
        return identities[name]
    agent, _, defense = name.partition("+")
    return agent, defense or "none"


def previous_report_runs(out_dir: str | Path) -> list[str] | None:
    """The run names of the report in ``out_dir`` (its report.json's ``runs``, in order), or None when
    the folder holds no readable report."""
    try:
        document = json.loads((Path(out_dir) / "report.json").read_text(encoding="utf-8"))
        runs = document["runs"]
        return [str(r["name"]) for r in runs]
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
