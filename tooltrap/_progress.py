"""The evaluation progress bar."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Progress:
    """The progress bar: N/M, elapsed, ETA, and the running rates of the benchmark's headline outcomes
    (``outcomes``: verdict fields; model-level episodes only, system-level outcomes counted apart).

    Drawn only when stdout is a terminal: into a file or a pipe a bar is no progress, and a stopped one
    leaves a blank line behind (one per round of an adaptive protocol). The counts are kept either way;
    what the caller logs at the end (stderr) is the summary."""

    def __init__(
        self,
        title: str,
        total: int,
        completed: int,
        records: Sequence[dict[str, Any]],
        outcomes: Sequence[str],
    ) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.outcomes = tuple(outcomes)
        self.counts = dict.fromkeys(self.outcomes, 0)
        self.n = self.system = 0
        for record in records:
            self._count(record)
        self.bar: RichProgress | None = None
        if not Console().is_terminal:
            return
        self.bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rates]}"),
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task(title, total=total, completed=completed, rates=self._rates())

    def _count(self, record: dict[str, Any]) -> None:
        if record.get("system_outcome"):
            self.system += 1
            return
        self.n += 1
        verdict = record.get("verdict", {})
        for outcome in self.outcomes:
            self.counts[outcome] += bool(verdict.get(outcome))

    def _rates(self) -> str:
        parts = [f"{o} {100 * c / self.n:.0f}%" for o, c in self.counts.items()] if self.n else []
        if self.system:
            parts.append(f"system {self.system}")
        return " ".join(parts)

    def advance(self, record: dict[str, Any]) -> None:
        self._count(record)
        if self.bar is not None:
            self.bar.update(self.task, advance=1, rates=self._rates())

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
