"""The EpiSEM self-check, for every twin pair (``scripts/selfcheck.py episem`` runs it over the corpus;
the tests run it on a sample and on hand-built faults).

Per pair it proves:

* **data**: every critical atom is in a minimal witness set and the declared witness sets are the
  rule's minimal ones; every atom is shown by some read call, every critical atom by the careful
  agent's reads;
* **gold**: in the safe world the gold commits legally; in the unsafe one it abstains or escalates
  without committing (full evidence);
* **no leak**: with every critical atom masked, each read call on every record of the task returns the
  same observation in both worlds (so nothing left in it tells the twins apart), and no masked atom's
  value appears in it under its field (or, for a distinctive string, anywhere);
* **execution stays possible**: every argument value of the prepare and commit calls is in the request
  or in what the careful reads still show under that mask (the amount, recipient or resource);
* **audit**: under ``recoverable`` one query naming a record of the case returns every masked atom with
  its world's value, and a query naming any other record returns nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tooltrap.envs.core import Executor
from tooltrap.envs.core.probes import (
    Outcome,
    ProbeResult,
    ProbeSet,
    ProbeSource,
    run_probes,
    verdict_flags,
)
from tooltrap.envs.core.trace import omit_path

from .benchmark import AUDIT_TOOL, EpiSEM, EvidenceVariant
from .probes import PROBE_SET
from .task import EpiSEMTask
from .world import dependent_paths, facts_in, leaves, read_runner, removal_order, world_state

WORLDS = ("unsafe", "safe")


@dataclass
class PairCheck:
    task_id: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def masked_observation(bench: EpiSEM, task: EpiSEMTask, world: str, mask: Iterable[str], call: Any) -> Any:
    """What a read call shows in ``world`` under ``mask`` (the env's masking, outside an episode)."""
    variant = EvidenceVariant(world=world, condition="suppressed", mask=tuple(mask))  # type: ignore[arg-type]
    run_on = read_runner(bench, task, variant, call.name, call.arguments)
    state = world_state(task, world)
    result = run_on(state)
    paths = dependent_paths(run_on, state, [task.atom(a) for a in variant.mask or ()], result)
    if paths is None:
        return {"unavailable": True}
    for path in removal_order(paths):
        result, _ = omit_path(result, path)
    return result


def _leaks(task: EpiSEMTask, observation: Any) -> list[str]:
    """Masked atoms' values found in an observation: under the atom's own field name, or (for a
    distinctive value) inside free text. A value the agent may see anyway (an unmasked atom's value, or
    words of the request) is not a leak when it shows up in text."""
    out = []
    found = list(leaves(observation))
    for atom_id in task.critical:
        atom = task.atom(atom_id)
        for world in WORLDS:
            values = task.values(world)
            value = values[atom_id]
            public = {repr(values[a]) for a in task.visible} | {
                repr(v) for a, v in values.items() if a not in task.critical
            }
            forms = (
                set()
                if repr(value) in public
                else {f for f in _text_forms(value) if f not in task.instruction}
            )
            for path, leaf in found:
                keys = [k.split("[")[0] for k in path.split(".")[1:]]
                if repr(leaf) in public:  # another record's visible value that happens to be equal
                    continue
                in_list = isinstance(value, list) and leaf in value and atom.predicate in keys
                if in_list or (leaf == value and keys and keys[-1] == atom.predicate):
                    out.append(f"{atom_id}={value!r} at {path}")
                elif isinstance(leaf, str) and any(form in leaf for form in forms):
                    out.append(f"{atom_id}={value!r} inside {path}")
    return out


def _text_forms(value: Any) -> set[str]:
    """How a value could be written inside free text, distinctive forms only (a plain word such as
    "active" or a small number would match by accident): strings with a digit or of 12+ characters,
    numbers from 100."""
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, str):
        distinctive = len(value) >= 12 or (len(value) >= 4 and any(ch.isdigit() for ch in value))
        return {value} if distinctive else set()
    if isinstance(value, (int, float)):
        if abs(value) < 100:
            return set()
        forms = {f"{value:,.2f}", f"{value:.2f}"}
        if float(value).is_integer():
            forms |= {str(int(value)), f"{int(value):,}"}
        return forms
    return set()


def _scalars(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, list):
        for v in value:
            yield from _scalars(v)
    else:
        yield value


def check_pair(bench: EpiSEM, task: EpiSEMTask) -> PairCheck:
    """Every check of the module docstring on one pair."""
    from tooltrap.envs.core import ToolEnv

    report = PairCheck(task.id)
    problems = report.problems
    problems += task.data_errors()
    reads = [c for c in task.gold_unsafe if bench.toolset(task).kinds.get(c.name) == "read"]
    gold_shown: set[str] = set()
    for atom in task.atoms:
        if not atom.exposures:
            problems.append(f"atom {atom.id} is shown by no read call")
        for e in atom.exposures:
            if any(e.tool == c.name and e.arguments == c.arguments for c in reads):
                gold_shown.add(atom.id)
    problems += [
        f"critical atom {a} is not shown by the careful reads" for a in task.critical if a not in gold_shown
    ]

    # gold, full evidence, in both worlds
    env = ToolEnv(bench, [task])
    for world in WORLDS:
        env.reset(options={"task_id": task.id, "world": world})
        info: dict[str, Any] = {}
        for call in task.gold_for({"world": world}):
            _, _, terminated, truncated, info = env.step(call.to_action())
            if terminated or truncated:
                break
        verdict = info.get("verdict", {})
        if not verdict.get("goal") or verdict.get("unsafe_commit"):
            problems.append(
                f"gold in the {world} world: disposition {verdict.get('disposition')}, goal {verdict.get('goal')}"
            )

    # no leak under the full critical mask; execution stays possible
    mask = task.critical
    calls = bench.read_calls(task)
    visible_values = set()
    for call in calls:
        try:
            seen = [masked_observation(bench, task, w, mask, call) for w in WORLDS]
        except Exception as exc:  # noqa: BLE001 - a careful read that fails is a data error
            problems.append(f"{call.name}({call.arguments}) fails: {exc}")
            continue
        if seen[0] != seen[1]:
            problems.append(
                f"{call.name}({call.arguments}) tells the twins apart under the full critical mask"
            )
        for leak in _leaks(task, seen[0]) + _leaks(task, seen[1]):
            problems.append(f"{call.name}({call.arguments}) leaks {leak}")
        if call in reads:
            visible_values.update(repr(v) for v in _scalars(seen[0]))
    acts = task.gold_safe[len(reads) :]
    produced = set()
    for call in acts:
        for value in _scalars(call.arguments):
            shown = repr(value) in visible_values or (isinstance(value, str) and value in task.instruction)
            shown = shown or (isinstance(value, (int, float)) and _number_in(value, task.instruction))
            if not shown and value not in produced:
                problems.append(
                    f"{call.name} argument {value!r} is neither in the request nor shown under the mask"
                )
        produced.update(_produced_ids(bench, task, call))

    # one query naming the case restores exactly the masked atoms; a query naming any other record nothing
    case = set(task.case_records)
    for world in WORLDS:
        variant = EvidenceVariant(world=world, condition="recoverable", mask=tuple(mask))  # type: ignore[arg-type]
        executor = Executor(bench, task, state=bench.initial_state(task, variant), variant=variant)
        values = task.values(world)
        for records in task.initial_state.collections.values():
            for record_id in records:
                record = executor.execute(AUDIT_TOOL, {"record_id": record_id}, step=0, index=0)
                facts = facts_in(record.result, task) if record.ok else {}
                if record_id not in case and facts:
                    problems.append(f"audit of {record_id} (not the case) returned {sorted(facts)}")
                if record_id in case and (
                    sorted(facts) != sorted(mask) or any(facts[a] != values[a] for a in facts)
                ):
                    problems.append(
                        f"audit of the case record {record_id} in the {world} world restores "
                        f"{sorted(facts)}, not exactly the mask {sorted(mask)}"
                    )
    report.problems = list(dict.fromkeys(problems))  # one line per distinct problem
    return report


def _number_in(value: float, text: str) -> bool:
    plain = f"{value:,.2f}".rstrip("0").rstrip(".")
    return any(
        form in text for form in {str(value), plain, plain.replace(",", ""), f"{value:,.2f}", f"{value:.2f}"}
    )


def _produced_ids(bench: EpiSEM, task: EpiSEMTask, call: Any) -> set[Any]:
    """Values a prepare call returns (a draft id the commit names)."""
    executor = Executor(bench, task, state=world_state(task, "safe"))
    out: set[Any] = set()
    reads = [c for c in task.gold_safe if bench.toolset(task).kinds.get(c.name) == "read"]
    for prior in [*reads, *task.gold_safe[len(reads) :]]:
        record = executor.execute(prior.name, prior.arguments, step=0, index=0)
        if record.ok:
            out.update(_scalars(record.result))
        if prior == call:
            break
    return out


def check_corpus(bench: EpiSEM, tasks: Iterable[EpiSEMTask]) -> list[PairCheck]:
    return [check_pair(bench, t) for t in tasks]


CONDITIONS = ("full", "suppressed", "recoverable")


def play_probe(env: Any, task: EpiSEMTask, variant: dict[str, Any], calls: Iterable[Any]) -> Outcome:
    """Play ``calls`` one per step (a tuple of calls is one action: a list); the outcome, with what was
    executed (the calls and the ending) so that a probe that played as gold is told apart."""
    env.reset(options={"task_id": task.id, **variant})
    reward, info = 0.0, {}
    for item in calls:
        if isinstance(item, tuple):
            action = json.dumps([{"name": c.name, "arguments": c.arguments} for c in item])
        else:
            action = item.to_action()
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    verdict = info.get("verdict") or {}
    trace = env.unwrapped.trace if hasattr(env, "unwrapped") else env.trace
    played = json.dumps(
        [[c.name, c.arguments, c.ok] for c in trace.calls] + [trace.disposition], sort_keys=True, default=str
    )
    # an attempt that ran out of calls before a decision has no verdict: its invalid calls are the trace's
    return Outcome(
        float(reward), verdict_flags(verdict), verdict.get("n_invalid_calls", trace.n_errors), played
    )


def check_probes(bench: EpiSEM, task: EpiSEMTask, probes: ProbeSet = PROBE_SET) -> list[ProbeResult]:
    """Every probe of :mod:`tooltrap.envs.episem.probes` in both worlds under every condition, against
    the careful solution of the same world and condition."""
    from tooltrap.envs.core import ToolEnv

    env = ToolEnv(bench, [task])
    results = []
    for world in WORLDS:
        for condition in CONDITIONS:
            variant = {"world": world, "condition": condition}
            gold_calls = task.gold_for(variant)
            gold = play_probe(env, task, variant, gold_calls)
            source = ProbeSource(task=task, variant=variant, gold=gold_calls)
            results += run_probes(
                f"{task.id}@{world}/{condition}",
                probes.probes(source),
                gold,
                lambda calls, variant=variant: play_probe(env, task, variant, calls),
            )
    return results
