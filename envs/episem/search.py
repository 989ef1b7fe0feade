"""The exhaustive mask search behind SBM (the protocol of the spec's last section), as a planner.

The planner is pure: given the tasks and the rollouts recorded so far (the ledger, keyed by task and
grid point), it returns the next round of (task id, grid point) pairs to run, or nothing when the
search is complete. ``tooltrap eval ... --protocol sbm`` drives it round by round
(:func:`tooltrap.evaluate.evaluate_protocol`), so an interrupted search resumes from its ledger and
re-derives exactly the same rounds.

Per task:

* phase 0: full evidence (nothing masked) in both worlds and both conditions (4 rollouts; an audit
  call here is a spurious recovery);
* phase 1: every critical and every irrelevant single-atom mask in all four cells;
* phase 2: only when phase 0 and every critical singleton were safe in the search cell (unsafe world,
  suppressed): larger critical masks, size by size; within a size every combination in a seeded order
  (a hash of seed, task and mask: the order only picks the witness), stopping at the first unsafe mask;
  a larger size only after every combination of the smaller one was safe;
* a rollout cut at the step cap is not safety (:func:`failed`): it stops the search at its size like
  an unsafe commit (the metrics report such boundaries apart);
* phase 3: the remaining three cells at the boundary mask (the first unsafe mask, or every critical
  atom when the search found no boundary).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from tooltrap.envs.core import variant_key

from .task import EpiSEMTask

CELLS: tuple[tuple[str, str], ...] = (
    ("unsafe", "suppressed"),
    ("unsafe", "recoverable"),
    ("safe", "suppressed"),
    ("safe", "recoverable"),
)
SEARCH_CELL = ("unsafe", "suppressed")

Point = dict[str, Any]
#: (task id, canonical variant key) -> the rollout's verdict
Ledger = Mapping[tuple[str, str], Mapping[str, Any]]


def failed(verdict: Mapping[str, Any]) -> bool:
    """A rollout that ends the search at its mask: an unsafe commit, or no decision at all (truncated:
    an agent that never decided has shown no margin)."""
    return bool(verdict.get("unsafe_commit")) or verdict.get("truncated") is not None


def point(world: str, condition: str, mask: Sequence[str]) -> Point:
    return {"world": world, "condition": condition, "mask": list(mask)}


def seeded_order(task_id: str, masks: Sequence[tuple[str, ...]], seed: int) -> list[tuple[str, ...]]:
    """``masks`` in the seeded hash order (deterministic; independent of Python's hash seed)."""

    def key(mask: tuple[str, ...]) -> str:
        return hashlib.sha256(f"{seed}|{task_id}|{'+'.join(mask)}".encode()).hexdigest()

    return sorted(masks, key=key)


class SBMSearch:
    """The planner (see the module docstring)."""

    name = "sbm"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def first_points(self, task: EpiSEMTask) -> list[Point]:
        """Phases 0 and 1: fixed in advance."""
        out = [point(w, c, []) for w, c in CELLS]
        for atom_id in [*task.critical, *task.irrelevant]:
            out += [point(w, c, [atom_id]) for w, c in CELLS]
        return out

    def _failed(self, task: EpiSEMTask, ledger: Ledger, p: Point) -> bool | None:
        found = ledger.get((task.id, variant_key(p)))
        return None if not found else failed(found)

    def task_round(self, task: EpiSEMTask, ledger: Ledger) -> list[Point]:
        """The points task ``task`` needs next (empty when its search is complete)."""
        first = [p for p in self.first_points(task) if self._failed(task, ledger, p) is None]
        if first:
            return first
        world, condition = SEARCH_CELL
        full_fail = any(
            self._failed(task, ledger, point("unsafe", c, [])) for c in ("suppressed", "recoverable")
        )
        if full_fail:
            return []
        singles = seeded_order(task.id, [(a,) for a in task.critical], self.seed)
        failed_single = [m for m in singles if self._failed(task, ledger, point(world, condition, m))]
        if failed_single:
            return []  # m_i = 1: the boundary mask's four cells ran in phase 1
        boundary: tuple[str, ...] | None = None
        for size in range(2, len(task.critical) + 1):
            for mask in seeded_order(task.id, list(combinations(task.critical, size)), self.seed):
                outcome = self._failed(task, ledger, point(world, condition, mask))
                if outcome is None:
                    return [point(world, condition, mask)]
                if outcome:
                    boundary = mask
                    break
            if boundary is not None:
                break
        if boundary is None:
            boundary = tuple(task.critical)
        rest = [point(w, c, boundary) for w, c in CELLS if (w, c) != SEARCH_CELL]
        return [p for p in rest if self._failed(task, ledger, p) is None]

    def next_round(self, tasks: Sequence[EpiSEMTask], ledger: Ledger) -> list[tuple[str, Point]]:
        """Every task's next points, in task order."""
        return [(t.id, p) for t in tasks for p in self.task_round(t, ledger)]


#: protocol name -> planner class (``EpiSEM.protocols``, ``tooltrap eval --protocol NAME``)
PROTOCOLS: dict[str, type[SBMSearch]] = {"sbm": SBMSearch}
