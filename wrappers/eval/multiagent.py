"""Per-role reports of the multi-agent envs (``tooltrap.envs.multiagent``): the generic part.

Each metric belongs to a role (``assistant/goal``, ``attacker/asr_reached``, ``gate/mean_reward`` ...)
and is a ratio ``sum(value) / sum(in denominator)`` over episodes, with the cluster bootstrap of the
single-agent reports (:mod:`.bootstrap`: 95% percentile intervals, seeded), clustered by the records'
``cluster_by`` field (the template: the unit the single-agent reports resample).

Episodes a simulated role spoilt (``void``: its actions kept failing their checks) and episodes a
provider ended (``system_outcome``) are in no denominator: they are charged to no one. They are
counted apart, by role (``simulator/void``, ``simulator/errors_<role>``, ``simulator/system_outcomes``).

A benchmark's evaluation package defines its env's :class:`RoleMetric` tuple and registers a
:class:`RoleReport` (:func:`~.report.register_report`) under the env's name, which the runs' records
carry as their ``benchmark``: ``tooltrap eval`` prints the summary and ``tooltrap report DIR ...``
writes report.md, metrics.csv and report.json with one column per run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    cluster_sums,
    ratio_intervals,
    resample_counts,
)
from .report import (
    OVERALL,
    BenchmarkReport,
    json_safe,
    metric_row,
    metric_table,
    report_files,
    system_outcome_counts,
)
from .table import Column, Estimate, Table, count, print_tables, rate, signed

Record = dict[str, Any]


@dataclass(frozen=True)
class RoleMetric:
    """One role's metric: the per-episode value and whether the episode is in its denominator (scored
    episodes only: never void, never a system-level outcome). ``plain``: a mean, not a rate."""

    role: str
    name: str
    value: Callable[[Record], float]
    counts: Callable[[Record], bool]
    plain: bool = False

    @property
    def key(self) -> str:
        return f"{self.role}/{self.name}"


def verdict_field(record: Record, field: str, default: Any = 0) -> Any:
    return record["verdict"].get(field, default)


def every(record: Record) -> bool:
    return True


def role_reward(role: str) -> Callable[[Record], float]:
    return lambda r: float(r.get("rewards", {}).get(role, 0.0))


def role_component(role: str, name: str) -> Callable[[Record], float]:
    return lambda r: float(r.get("reward_components", {}).get(role, {}).get(name, 0.0))


def scored(record: Record) -> bool:
    """In the roles' denominators: played to a verdict by the policies themselves."""
    return not record.get("void") and not record.get("system_outcome")


def simulator_counts(records: Sequence[Record], roles: Sequence[str]) -> dict[str, int]:
    """What is counted apart: void episodes, each role's rejected actions, system-level outcomes."""
    out = {"void": sum(bool(r.get("void")) for r in records)}
    for role in roles:
        out[f"errors_{role}"] = sum(len(r.get("simulator_errors", {}).get(role, ())) for r in records)
    out["system_outcomes"] = sum(bool(r.get("system_outcome")) for r in records)
    return out


class RoleReport(BenchmarkReport):
    """The per-role report of one multi-agent env.

    Args:
        env: The env's name (the records' ``benchmark``).
        metrics: The roles' metrics, in the order shown.
        cluster_by: The record field whose values are the bootstrap clusters.
        roles: The env's roles (their simulator-error counts).
    """

    def __init__(self, env: str, metrics: Sequence[RoleMetric], cluster_by: str, roles: Sequence[str]):
        self.env, self.metrics, self.cluster_by, self.roles = env, tuple(metrics), cluster_by, tuple(roles)
        self.cluster_label = cluster_by.removesuffix("_id")
        self.plain_metrics = (
            *(m.key for m in self.metrics if m.plain),
            *(f"simulator/{k}" for k in simulator_counts([], roles)),
        )

    def intervals(self, records: Sequence[Record], *, n_resamples: int, seed: int) -> dict[str, Interval]:
        """Every metric's interval over the scored records (one set of resamples for all of them)."""
        kept = [r for r in records if scored(r)]
        labels = [str(r.get(self.cluster_by, r["verdict"].get(self.cluster_by, ""))) for r in kept]
        index = {label: i for i, label in enumerate(sorted(set(labels)))}
        clusters = np.array([index[label] for label in labels], dtype=np.int64)
        k = len(index)
        num, den = np.zeros((k, len(self.metrics))), np.zeros((k, len(self.metrics)))
        for j, metric in enumerate(self.metrics):
            values = np.array([metric.value(r) for r in kept], dtype=np.float64)
            mask = np.array([metric.counts(r) for r in kept], dtype=bool)
            num[:, j], den[:, j] = cluster_sums(values, mask, clusters, k)
        found = ratio_intervals(num, den, resample_counts(k, n_resamples, seed))
        out = {m.key: iv for m, iv in zip(self.metrics, found, strict=True)}
        for key, n in simulator_counts(records, self.roles).items():
            out[f"simulator/{key}"] = Interval(float(n), float(n), float(n), len(records))
        return out

    def summarize(
        self, records: Sequence[Record], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
    ) -> dict[str, Interval]:
        return self.intervals(records, n_resamples=n_resamples, seed=seed)

    def build(
        self,
        runs: dict[str, list[Record]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
        identities: Mapping[str, tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        return {
            "env": self.env,
            "n_resamples": n_resamples,
            "seed": seed,
            "runs": {
                name: {
                    "n_episodes": sum(scored(r) for r in records),
                    "roles": records[0].get("roles", {}) if records else {},
                    "system_outcomes": system_outcome_counts(records),
                    "metrics": self.intervals(records, n_resamples=n_resamples, seed=seed),
                }
                for name, records in runs.items()
            },
        }

    def column(self, metric: str) -> Column:
        """Simulator counts as counts, means (rewards) signed, rates in %; each with its n."""
        if metric.startswith("simulator/"):
            return count(metric)
        if metric in self.plain_metrics:
            return signed(metric, show_n=True)
        return rate(metric, show_n=True)

    def table(self, report: dict[str, Any]) -> Table:
        """A row per metric, a column per run."""
        runs = report["runs"]
        keys = list(next(iter(runs.values()))["metrics"]) if runs else []
        return metric_table(
            f"{report['env']}: per role, 95% {self.cluster_label}-bootstrap CI",
            list(runs),
            [
                (key, self.column(key), [Estimate.of(run["metrics"][key]) for run in runs.values()])
                for key in keys
            ],
        )

    def markdown(self, report: dict[str, Any]) -> str:
        runs = report["runs"]
        lines = [
            f"# {report['env']} report (per role)",
            "",
            f"Rates in % and means, with 95% {self.cluster_label}-clustered bootstrap intervals "
            f"({report['n_resamples']:,} resamples, seed {report['seed']}) and n (the denominator). Void "
            "episodes (a simulated role's actions kept failing their checks) and system-level outcomes are "
            "in no denominator; they are counted apart (simulator/...).",
            "",
            self.table(report).markdown(),
            "",
            "Roles: "
            + "; ".join(
                f"{name}: " + ", ".join(f"{k}={v}" for k, v in run["roles"].items())
                for name, run in runs.items()
            ),
            "",
        ]
        return "\n".join(lines)

    def files(self, report: dict[str, Any]) -> dict[str, str]:
        rows = [
            metric_row(name, OVERALL, key.partition("/")[0], key, iv)
            for name, run in report["runs"].items()
            for key, iv in run["metrics"].items()
        ]
        document = {
            "env": report["env"],
            "cluster": self.cluster_by,
            "n_resamples": report["n_resamples"],
            "seed": report["seed"],
            "runs": [
                {
                    "name": name,
                    "n_episodes": run["n_episodes"],
                    "roles": run["roles"],
                    "system_outcomes": run["system_outcomes"],
                }
                for name, run in report["runs"].items()
            ],
            "rates": [json_safe(row) for row in rows],
        }
        return report_files("report.md", self.markdown(report), rows, document)

    def print_terminal(self, report: dict[str, Any]) -> None:
        print_tables([self.table(report)], width=max(120, 30 + 34 * len(report["runs"])))

    def figures(self, report: Any, out_dir: Path) -> list[Path]:
        return []
