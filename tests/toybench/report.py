"""The toy's report, registered by object: the generic rates over its verdicts under a title of its own
(``tooltrap report`` finds it through the benchmark a run records)."""

from __future__ import annotations

from tooltrap.wrappers.eval.report import RateReport, RateTables, register_report

from .benchmark import LibraryBench

TITLE = "# ToyLibrary: lend only what is on the shelf"


class LibraryReport(RateReport):
    """Goal, unsafe lends and over-refusals per run and per stock world."""

    def markdown(self, report: RateTables) -> str:
        return f"{TITLE}\n\n{super().markdown(report)}"


REPORT = register_report(
    LibraryBench, LibraryReport(LibraryBench.name, LibraryBench.metrics, LibraryBench.cluster_by)
)
