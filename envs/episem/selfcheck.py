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
* **no derived leak**: the same comparison over alternative worlds (:func:`alternative_world_leaks`):
  each masked atom in turn takes its twin's value, its perturbation and boundary values drawn from the
  task (:func:`alternative_values`), and every read call must still show exactly what it shows in the
  base world under the mask; a value a tool derives from the atom through a threshold, a bucket, a
  count or a clamp (which neither the twin nor one perturbation need move) is caught here, with the
  ``@tool(..., derived=...)`` declaration that hides it;
* **execution stays possible**: every argument value of the prepare and commit calls is in the request
  or in what the careful reads still show under that mask (the amount, recipient or resource);
* **audit**: under ``recoverable`` one query naming a record of the case returns every masked atom with
  its world's value, and a query naming any other record returns nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooltrap.envs.core import Executor, State, ToolSpec, canonical_json
from tooltrap.envs.core.probes import (
    Outcome,
    ProbeResult,
    ProbeSet,
    ProbeSource,
    run_probes,
    verdict_flags,
)

from .benchmark import AUDIT_TOOL, EpiSEM, EvidenceVariant
from .probes import PROBE_SET
from .task import Atom, EpiSEMTask
from .world import (
    changed_paths,
    facts_in,
    leaves,
    masked_result,
    perturb,
    perturbed_state,
    read_runner,
    world_state,
)

WORLDS = ("unsafe", "safe")


@dataclass
class PairCheck:
    task_id: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def masked_observation(bench: EpiSEM, task: EpiSEMTask, world: str, mask: Iterable[str], call: Any) -> Any:
    """What a read call shows in ``world`` under ``mask``: the env's masking
    (:func:`~tooltrap.envs.episem.world.masked_result`, which the episode hook shares), outside an
    episode."""
    variant = EvidenceVariant(world=world, condition="suppressed", mask=tuple(mask))  # type: ignore[arg-type]
    run_on = read_runner(bench, task, variant, call.name, call.arguments)
    spec = bench.toolset(task, variant)[call.name]
    atoms = [task.atom(a) for a in variant.mask or ()]
    return masked_result(spec, run_on, world_state(task, world), atoms)


def alternative_values(task: EpiSEMTask, atom_id: str, world: str) -> list[Any]:
    """The values a masked atom takes in the alternative worlds around ``world`` (its value there left
    out): the twin's value and the perturbation, and boundary values drawn from the task so that a value
    derived through a threshold, a bucket, a membership test or a clamp crosses it:

    * numbers: 0, -1, minus the value, and every numeric atom value of the task (both worlds) with
      that value +-1, x10 and /10 (an int atom stays an int);
    * strings: every string atom value of the task (both worlds, list items included) and ``""``;
    * flags: flipped (the perturbation); lists: ``[]``, every list atom value, and the list with each
      scalar atom value of the task added; anything else: the twin's value and the perturbation.
    """
    own = task.values(world)[atom_id]
    twin = task.values("safe" if world == "unsafe" else "unsafe")[atom_id]
    pool = [v for w in WORLDS for v in task.values(w).values()]
    scalars = [
        x for v in pool for x in (v if isinstance(v, list) else [v]) if not isinstance(x, (list, dict))
    ]
    found: list[Any] = [twin, perturb(own)]
    if isinstance(own, (int, float)) and not isinstance(own, bool):
        numbers = [x for x in scalars if isinstance(x, (int, float)) and not isinstance(x, bool)]
        near = [0, -1, -own] + [y for x in numbers for y in (x, x - 1, x + 1, x * 10, x / 10)]
        found += [int(y) if isinstance(own, int) else float(y) for y in near]
    elif isinstance(own, str):
        found += [x for x in scalars if isinstance(x, str)] + [""]
    elif isinstance(own, list):
        found += [[], *(v for v in pool if isinstance(v, list)), *([*own, x] for x in scalars)]
    elif isinstance(own, dict):
        found.append({})
    out: dict[tuple[str, str], Any] = {}
    for value in found:  # distinct values (1, 1.0 and True kept apart), the world's own left out
        out.setdefault((type(value).__name__, repr(value)), value)
    out.pop((type(own).__name__, repr(own)), None)
    return list(out.values())


def alternative_world_leaks(
    bench: EpiSEM, task: EpiSEMTask, mask: Sequence[str], calls: Sequence[Any]
) -> list[str]:
    """The twins' comparison extended to alternative worlds: in each world, each masked atom in turn
    takes each of its :func:`alternative_values` (everything else as in that world), and every read
    call is run under ``mask`` there. An observation (or a failure) that differs from the world's own
    shows something computed from the masked value that the mask does not hide: a derived field that
    perturbation does not find and the tool does not declare. One problem per call and atom, with the
    declaration that fixes it. Every tool run of a world is reused across its alternatives."""
    atoms = [task.atom(a) for a in mask]
    problems: list[str] = []
    flagged: set[tuple[str, str, str]] = set()
    for world in WORLDS:
        variant = EvidenceVariant(world=world, condition="suppressed", mask=tuple(mask))  # type: ignore[arg-type]
        toolset = bench.toolset(task, variant)
        base_state = world_state(task, world)
        runs = []
        for call in calls:
            try:
                run_on = read_runner(bench, task, variant, call.name, call.arguments)
            except Exception:  # noqa: BLE001 - invalid arguments: the no-leak check reports the call
                continue
            spec = toolset[call.name]
            key = (call.name, canonical_json(call.arguments))
            runs.append((call, key, spec, run_on, _outcome(spec, run_on, base_state, atoms)))
        for atom in atoms:
            own = task.values(world)[atom.id]
            for alt in alternative_values(task, atom.id, world):
                state = base_state.fork()
                state.update(atom.collection, atom.record_id, **{atom.predicate: alt})
                perturbed = perturbed_state(state, atoms)  # one per alternative, shared by its calls
                for call, key, spec, run_on, base in runs:
                    if (*key, atom.id) in flagged:
                        continue
                    seen = _outcome(spec, run_on, state, atoms, perturbed)
                    if seen != base:
                        flagged.add((*key, atom.id))
                        problems.append(_derived_leak(call, atom, world, own, alt, base, seen))
    return problems


def _outcome(
    spec: ToolSpec, run_on: Any, state: State, atoms: Sequence[Atom], perturbed: State | None = None
) -> tuple[str, Any]:
    """``("shows", masked observation)`` or ``("fails", the error)``: a call that fails only for some
    value of a masked atom tells that value too."""
    try:
        return "shows", masked_result(spec, run_on, state, atoms, perturbed)
    except Exception as exc:  # noqa: BLE001 - the failure is compared, not raised
        return "fails", f"{type(exc).__name__}: {exc}"


def _derived_leak(
    call: Any, atom: Atom, world: str, own: Any, alt: Any, base: tuple[str, Any], seen: tuple[str, Any]
) -> str:
    """The problem line for an observation that moves with a masked value, naming the field and the
    declaration that hides it."""
    pattern = "<field>"
    if base[0] == seen[0] == "shows":
        paths = sorted(changed_paths(base[1], seen[1]))
        what = f"{', '.join(paths[:3])} changes under the mask"
        # the first changed path as a declaration key: list indexes become [*], the root is implied
        pattern = re.sub(r"\[\d+\]", "[*]", paths[0]).removeprefix("$.").removeprefix("$") or pattern
    elif seen[0] == "fails":
        what = f"the call fails ({seen[1]})"
    else:
        what = f"the call succeeds (with {own!r} it fails: {base[1]})"
    return (
        f"{call.name}({call.arguments}) shows the masked atom {atom.id} through a derived value: in the "
        f"{world} world with {atom.predicate}={alt!r} instead of {own!r}, {what}. If the tool computes "
        f"it from {atom.predicate}, declare it with every field it is computed from: "
        f'@tool("read", derived={{{pattern!r}: ({atom.predicate!r},)}}) (docs/episem_authoring.md); '
        "otherwise the tool must not depend on it"
    )


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
    return (leaf for _, leaf in leaves(value))


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
    problems += alternative_world_leaks(bench, task, mask, calls)
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
            tools = bench.toolset(task, EvidenceVariant(**variant)).specs  # type: ignore[arg-type]
            source = ProbeSource(task=task, variant=variant, gold=gold_calls, tools=tools)
            results += run_probes(
                f"{task.id}@{world}/{condition}",
                probes.probes(source),
                gold,
                lambda calls, variant=variant: play_probe(env, task, variant, calls),
            )
    return results
