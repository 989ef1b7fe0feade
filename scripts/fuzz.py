"""Fuzz tooltrap envs with mixed actions, under every variant and defense a benchmark has.

Usage::

    python scripts/fuzz.py ENV_ID [ENV_ID ...] [--actions 100000] [--workers 2] [--seed 0]
    python scripts/fuzz.py episem                # every env id of a benchmark, in turn
    python scripts/fuzz.py all --actions 20000   # every registered tooltrap env id

The actions: valid calls, lists of calls, and their mutations (truncated JSON, numbers past Python's
digit limit and just within it, deep nesting, lone surrogates, wrong types, unknown tools, thousands of
unknown argument names, arrays of ten thousand items, mistyped and unknown ids, the last dates a
calendar holds, NaN and infinity, oversized strings, prose, non-strings).

Each episode is played under the next *setting* in turn: a defense that applies to the benchmark (every
registered defense whose wrapper accepts the env; ``none`` included) crossed with every value of each
variant axis (EpiSEM's world x condition x mask: the default mask, none, or a random subset of the
task's maskable atoms; SentryBench's attack on/off; AgentProp's five injection settings). A benchmark
given by name cycles its env ids too.

Prints, per run: actions and actions/s, uncaught exceptions by type (in ``reset``, ``step``, a state
hash, or the record writer storing the episode: ``json_line`` of its trace and verdict), state changes
after failed calls (a step whose every call failed must leave the state byte-identical), the slowest
step (CPU time, after ``gc.freeze()`` of the set-up, less the garbage collector's pauses inside it,
which are reported apart; and by the clock), and memory (RSS after the set-up
and a warm-up, after each tenth of the run, the peak) per worker. Exit status 1 when there was any
uncaught exception or state change after a failed call, a step slower than ``MAX_STEP_S``, or RSS grown
by ``MAX_RSS_GROWTH_MB`` or more (CI runs it over every env id; ``tests/engine/test_fuzz.py`` runs
20,000 actions per benchmark with another seed, without the timing criteria: the test machines are
shared).
"""

from __future__ import annotations

import gc
import importlib
import itertools
import json
import os
import random
import resource
import sys
import time
import traceback
import typing
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import tooltrap
from tooltrap.envs.core import EnvUsageError
from tooltrap.envs.packages import PACKAGES
from tooltrap.wrappers.defenses import DEFENSES, apply_defense
from tooltrap.wrappers.eval.run import json_line

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

gym.register_envs(tooltrap)

#: issue 24: no hostile action may stall a step (deep nesting, huge numbers, unknown ids among many).
#: Measured in CPU time of the step's thread (on a shared machine the clock also counts other processes'
#: turns: the slowest step by the clock is reported beside it), after ``gc.freeze()`` (see ``--no-gc-
#: freeze``: a full collection's pause depends on the heap, not on the action).
MAX_STEP_S = 0.050
MAX_RSS_GROWTH_MB = 200  # nor leak: the whole run over one set of envs per worker


#: the largest integer JSON decoding accepts (Python refuses more than 4,300 digits)
HUGE_INT = int("9" * 4300)
WORDS = ("ok", "please", "status", "Ünïcödé ✓", "", " ", "a" * 300, "\u202e\u0000", "🙂" * 10, "null")
INTEGERS = (1, 2, 5, 20, 0, -1, 10**6, 2**63, -(2**63), 10**4299, HUGE_INT)
NUMBERS = (0.5, 1.0, -3.2, 1e308, -1e308, 5e-324, float("nan"), float("inf"), float("-inf"))
DATES = ("2026-03-02", "2026-13-40", "tomorrow", "9999-07-05", "9999-12-31", "0001-01-01", "2024-02-29")
TIMES = ("09:00", "25:61", "noon", "23:59:59.999999")


# -- settings --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """How one episode is played: the env id, the defense wrapping it and the variant values (``mask``
    may be ``"random"``: a random subset of the task's maskable atoms, drawn at reset)."""

    env_id: str
    defense: str
    variant: tuple[tuple[str, Any], ...]

    def label(self) -> str:
        values = ",".join(f"{k}={v}" for k, v in self.variant)
        return f"{self.env_id}+{self.defense}" + (f"[{values}]" if values else "")


def env_ids(names: Sequence[str]) -> list[str]:
    """The env ids ``names`` stand for: an env id, a benchmark package name (``episem``: its env ids)
    or ``all`` (every registered tooltrap env id)."""
    packages = {p: importlib.import_module(f"tooltrap.envs.{p}").ENV_IDS for p in PACKAGES}
    out: list[str] = []
    for name in names:
        if name == "all":
            out += [i for ids in packages.values() for i in ids]
        elif name in packages:
            out += list(packages[name])
        else:
            tooltrap.check_env_id(name)  # a typed error with did-you-mean for a misspelt id
            out.append(name)
    return list(dict.fromkeys(out))


def variant_axes(env: gym.Env) -> dict[str, tuple[Any, ...]]:
    """Every variant key with the values the fuzz cycles: a ``Literal`` key's values, a bool's two, and
    for an optional tuple of ids (EpiSEM's mask) the default, none, and a random subset."""
    model = env.unwrapped.benchmark.variant_model  # type: ignore[attr-defined]
    axes: dict[str, tuple[Any, ...]] = {}
    for key, info in model.model_fields.items():
        hint = info.annotation
        if typing.get_origin(hint) is typing.Literal:
            axes[key] = typing.get_args(hint)
        elif hint is bool:
            axes[key] = (False, True)
        elif type(None) in typing.get_args(hint) and any(
            typing.get_origin(a) is tuple for a in typing.get_args(hint)
        ):
            axes[key] = (None, (), "random")
    return axes


def applicable_defenses(env_id: str) -> list[str]:
    """``none`` and every registered defense whose wrapper accepts ``env_id`` (a defense refuses, with
    a typed usage error, a benchmark it cannot serve: a confirmation gate needs an authorization set)."""
    out = ["none"]
    for name in DEFENSES:
        try:
            apply_defense(gym.make(env_id), name).reset(seed=0)
        except EnvUsageError:
            continue
        out.append(name)
    return out


def settings(ids: Sequence[str]) -> list[Setting]:
    """Every (env id, defense, variant) combination, env ids interleaved (a short run still sees each)."""
    per_id = []
    for env_id in ids:
        axes = variant_axes(gym.make(env_id))
        combos = []
        for defense in applicable_defenses(env_id):
            for values in itertools.product(*axes.values()):
                variant = dict(zip(axes, values, strict=True))
                # a mask needs a condition that masks (EpiSEM refuses one under full evidence)
                if variant.get("condition") == "full" and variant.get("mask") not in (None, ()):
                    continue
                combos.append(Setting(env_id, defense, tuple(variant.items())))
        per_id.append(combos)
    return [s for group in itertools.zip_longest(*per_id) for s in group if s is not None]


def _mask(rng: random.Random, task: Any) -> tuple[str, ...]:
    maskable = [a for a in getattr(task, "atoms", ()) if a.id not in set(getattr(task, "visible", ()))]
    return tuple(a.id for a in maskable if rng.random() < 0.5)


# -- actions ---------------------------------------------------------------------------------------------
def _ids(env: Any) -> list[str]:
    state = env.unwrapped.state
    return [i for c in state.collections() for i in state.collection(c)] or ["x_1"]


def _typo(rng: random.Random, word: str) -> str:
    """``word`` with one character changed, dropped, doubled or two swapped (a model's misspelt id)."""
    if not word:
        return "x"
    i = rng.randrange(len(word))
    pick = rng.randrange(4)
    if pick == 0:
        return word[:i] + rng.choice("abcxyz0123456789_-") + word[i + 1 :]
    if pick == 1:
        return word[:i] + word[i + 1 :]
    if pick == 2:
        return word[:i] + word[i] + word[i:]
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :] if i else word[::-1]


def _value(rng: random.Random, name: str, schema: dict[str, Any], ids: list[str]) -> Any:
    if "enum" in schema and rng.random() < 0.9:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        return rng.choice(INTEGERS)
    if kind == "number":
        return rng.choice(NUMBERS)
    if kind == "array":
        n = rng.choice((0, 1, 2, 3, 60))
        return [_value(rng, name, schema.get("items", {"type": "string"}), ids) for _ in range(n)]
    if name.endswith("_id") or name.endswith("_ids") or name == "target":
        chosen = rng.choice(ids)
        return _typo(rng, chosen) if rng.random() < 0.2 else chosen
    if name in ("to", "cc", "emails", "attendees"):
        return f"{rng.choice(('ana', 'bo', 'x'))}@{rng.choice(('example.com', 'client.io'))}"
    if "date" in name:
        return rng.choice(DATES)
    if name in ("start", "end") or "time" in name:
        return rng.choice(TIMES)
    return rng.choice(WORDS)


def _call(rng: random.Random, tools: list[dict[str, Any]], ids: list[str]) -> dict[str, Any]:
    fn = rng.choice(tools)["function"]
    props = fn["parameters"].get("properties", {})
    required = set(fn["parameters"].get("required", []))
    arguments = {n: _value(rng, n, s, ids) for n, s in props.items() if n in required or rng.random() < 0.4}
    return {"name": fn["name"], "arguments": arguments}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _mutate(rng: random.Random, call: dict[str, Any], ids: list[str]) -> Any:
    text = json.dumps(call, ensure_ascii=False)
    name, arguments = call["name"], call["arguments"]
    pick = rng.randrange(24)
    if pick == 0:
        return text[: rng.randrange(len(text))]
    if pick == 1:
        digits = "9" * rng.choice((20, 4301, 5000))
        return '{"name": "' + name + '", "arguments": {"limit": ' + digits + "}}"
    if pick == 2:
        return "[" * rng.choice((50, 1000, 30_000)) + text
    if pick == 3:
        return json.dumps({**call, "arguments": {k: "\ud800" + str(v) for k, v in arguments.items()}})
    if pick == 4:
        return json.dumps({**call, "extra": 1})
    if pick == 5:
        return json.dumps({**call, "name": name[:-1]})
    if pick == 6:
        return json.dumps({**call, "arguments": json.dumps(arguments)})
    if pick == 7:
        return json.dumps({**call, "arguments": rng.choice(([1, 2], "not json {", 5, None))})
    if pick == 8:
        return json.dumps({"name": name, "arguments": {a: rng.choice((1, [], {}, None)) for a in arguments}})
    if pick == 9:
        return json.dumps([call] * rng.choice((0, 9, 50)))
    if pick == 10:
        return "I think I should " + text
    if pick == 11:
        return rng.choice((None, 5, b"bytes", ["list"], {"name": "x"}))
    if pick == 12:
        return json.dumps({"name": name, "arguments": {k: "x" * 30_000 for k in arguments}})
    if pick == 13:
        return text.replace('"', "'")
    if pick == 14:
        return json.dumps({"name": 5, "arguments": {}})
    if pick == 15:  # thousands of unknown argument names
        return _dumps({"name": name, "arguments": {**arguments, **{f"k{i}": 0 for i in range(2000)}}})
    if pick == 16:  # ten thousand items where a value (or a short list) belongs
        key = rng.choice([*arguments, "items"])
        return _dumps({"name": name, "arguments": {**arguments, key: [0] * 10_000}})
    if pick == 17:  # an id that is not there: misspelt, or made up beside thousands of real ones
        key = next((k for k in arguments if k.endswith("_id")), "id")
        wrong = _typo(rng, rng.choice(ids)) if rng.random() < 0.7 else f"{rng.choice(ids)}_{rng.random()}"
        return _dumps({"name": name, "arguments": {**arguments, key: wrong}})
    if pick == 18:  # nesting deep inside an argument (valid JSON)
        depth = rng.choice((100, 500, 990))
        return '{"name": "' + name + '", "arguments": {"q": ' + "[" * depth + "0" + "]" * depth + "}}"
    if pick == 19:  # numbers at the edge of what JSON decodes: every number, every integer argument
        big = {
            k: (HUGE_INT if isinstance(v, int) and not isinstance(v, bool) else v)
            for k, v in arguments.items()
        }
        return _dumps({"name": name, "arguments": {**big, "count": HUGE_INT}})
    if pick == 20:  # the last dates a calendar holds, in every date-like argument
        last = rng.choice(("9999-07-05", "9999-12-31"))
        return _dumps(
            {"name": name, "arguments": {k: (last if "date" in k else v) for k, v in arguments.items()}}
        )
    if pick == 21:
        return text.replace("1", rng.choice(("NaN", "Infinity", "-Infinity", "1e400")), 1)
    if pick == 22:  # an object where a string belongs, with many keys
        key = rng.choice([*arguments, "query"])
        return _dumps({"name": name, "arguments": {**arguments, key: {str(i): i for i in range(3000)}}})
    return text + rng.choice(("}", "]", ",", "\x00"))


def _terminals(info: dict[str, Any]) -> set[str]:
    return set(
        info.get("terminal_tools") or {n for n, k in info.get("tool_kinds", {}).items() if k == "terminal"}
    )


# -- the run ---------------------------------------------------------------------------------------------
def _rss_mb() -> float:
    """This process's resident memory now (Linux); the peak where /proc is not there."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _GcClock:
    """The CPU time the garbage collector spends, summed over its collections (``gc.callbacks``). A
    collection comes in whatever step allocates when a generation fills, and its pause grows with the
    heap the process has built, not with that step's action: a step is charged its time without it, and
    the longest pause is reported apart."""

    def __init__(self) -> None:
        self.total = 0.0
        self.longest = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.thread_time()
        else:
            pause = time.thread_time() - self._start
            self.total += pause
            self.longest = max(self.longest, pause)


class _Worker:
    """One process's share: its envs (one per env id and defense, made on first use), its RNG, counts."""

    def __init__(self, seed: int, plan: Sequence[Setting]):
        self.rng = random.Random(seed)
        self.plan = plan
        self.next_setting = seed % len(plan)
        # every env made up front, so that memory measured after the warm-up is the run's, not the set-up's
        self.envs: dict[tuple[str, str], gym.Env] = {
            (s.env_id, s.defense): apply_defense(gym.make(s.env_id), s.defense) for s in plan
        }
        self.exceptions: Counter[str] = Counter()
        self.samples: dict[str, str] = {}
        self.per_setting: Counter[str] = Counter()
        self.state_changes = 0
        self.slowest = (0.0, "", "")  # (CPU seconds, action, setting) of the costliest step
        self.slowest_wall = 0.0  # the longest step by the clock (preemption on a shared machine included)
        self.gc_clock = _GcClock()
        self.steps = self.episodes = 0

    def _env(self, setting: Setting) -> gym.Env:
        return self.envs[(setting.env_id, setting.defense)]

    def _fail(self, where: str, exc: BaseException, action: Any, setting: Setting) -> None:
        kind = f"{where}:{type(exc).__name__}"
        self.exceptions[kind] += 1
        self.samples.setdefault(
            kind, f"{setting.label()}\n{str(action)[:200]!r}\n{traceback.format_exc()[-1500:]}"
        )

    def reset(self) -> tuple[gym.Env, Setting, dict[str, Any]]:
        """The next setting's env, reset on a random task (retried on the next setting if it raises;
        when every setting raises in a row, the run cannot go on: the last exception is re-raised)."""
        failure: Exception = RuntimeError("no setting to play")
        for _ in range(len(self.plan)):
            setting = self.plan[self.next_setting]
            self.next_setting = (self.next_setting + 1) % len(self.plan)
            env = self._env(setting)
            base = env.unwrapped
            task = base.tasks[self.rng.randrange(len(base.tasks))]  # type: ignore[attr-defined]
            options = {"task_id": task.id, **dict(setting.variant)}
            if options.get("mask") == "random":
                options["mask"] = _mask(self.rng, task)
            try:
                _, info = env.reset(seed=self.rng.randrange(10**6), options=options)
            except Exception as exc:  # a reset with valid options must not raise
                self._fail("reset", exc, options, setting)
                failure = exc
                continue
            self.episodes += 1
            return env, setting, info
        raise failure

    def store(self, env: gym.Env, info: dict[str, Any], setting: Setting) -> None:
        """Write the ended episode as the run folder would (``json_line``): it must be storable."""
        base = env.unwrapped
        record = {
            "verdict": info.get("verdict"),
            "reward_components": info.get("reward_components"),
            "variant": base.episode_variant,  # type: ignore[attr-defined]
            "trace": base.trace.to_dict(),  # type: ignore[attr-defined]
        }
        try:
            json_line(record)
        except Exception as exc:  # the record writer must store every episode
            self._fail("record", exc, base.trace.steps[-1].action, setting)  # type: ignore[attr-defined]

    def run(self, n: int) -> None:
        rng = self.rng
        env, setting, info = self.reset()
        tools, ids, acting, ending, label = self._episode(env, setting, info)
        for _ in range(n):
            base: Any = env.unwrapped
            call = _call(rng, acting, ids)
            roll = rng.random()
            if roll < 0.03:
                action: Any = json.dumps(_call(rng, ending, ids))
            elif roll < 0.40:
                action = json.dumps(call, ensure_ascii=False)
            elif roll < 0.50:
                action = json.dumps([_call(rng, tools, ids) for _ in range(rng.randint(1, 8))])
            else:
                action = _mutate(rng, call, ids)
            self.per_setting[label] += 1
            try:
                before = base.state.hash()
                collecting = self.gc_clock.total
                cpu, wall = time.thread_time(), time.perf_counter()
                _, _, terminated, truncated, info = env.step(action)
                cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
                cpu -= self.gc_clock.total - collecting  # the collector's pauses are reported apart
                after = base.state.hash()
            except Exception as exc:  # an uncaught exception (in a step or a state hash) is what it looks for
                self._fail("step", exc, action, setting)
                env, setting, info = self.reset()
                tools, ids, acting, ending, label = self._episode(env, setting, info)
                continue
            self.steps += 1
            if cpu > self.slowest[0]:
                self.slowest = (cpu, str(action)[:120], label)
            self.slowest_wall = max(self.slowest_wall, wall)
            step = base.trace.steps[-1]
            if (step.error is not None or all(not c.ok for c in step.calls)) and after != before:
                self.state_changes += 1
            if terminated or truncated:
                self.store(env, info, setting)
                env, setting, info = self.reset()
                tools, ids, acting, ending, label = self._episode(env, setting, info)

    @staticmethod
    def _episode(
        env: gym.Env, setting: Setting, info: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], list[dict[str, Any]], str]:
        """What the episode's actions are drawn from: its tools, the ids in its state, the tools that
        act and those that end the episode, and the setting's label."""
        tools, terminals = info["tools"], _terminals(info)
        acting = [t for t in tools if t["function"]["name"] not in terminals] or tools
        ending = [t for t in tools if t["function"]["name"] in terminals] or tools
        return tools, _ids(env), acting, ending, setting.label()


def _worker(job: tuple[int, int, tuple[Setting, ...], bool]) -> dict[str, Any]:
    n, seed, plan, freeze = job
    worker = _Worker(seed, plan)
    worker.run(min(n, 200))  # warm-up: imports, caches and the first envs, before memory is measured
    if freeze:
        # the loaded corpora and envs live as long as the process, yet every full collection scans them
        # (20-60 ms on a shared 2-core machine, in whatever step happens to allocate then): frozen, as a
        # long-running trainer can freeze them once its envs are made, they are out of its reach
        gc.freeze()
    gc.callbacks.append(worker.gc_clock)
    try:
        rss_start = _rss_mb()
        start = time.perf_counter()
        rest = max(n - 200, 0)
        curve = []  # RSS after each tenth of the run: flat, or growing (a leak shows as a slope)
        for tenth in range(10):
            worker.run(rest * (tenth + 1) // 10 - rest * tenth // 10)
            curve.append(round(_rss_mb()))
        seconds = time.perf_counter() - start
    finally:
        gc.callbacks.remove(worker.gc_clock)
        if freeze:
            gc.unfreeze()  # (a run in the calling process leaves its collector as it was)
    return {
        "actions": n,
        "steps": worker.steps,
        "episodes": worker.episodes,
        "seconds": seconds,
        "exceptions": dict(worker.exceptions),
        "samples": worker.samples,
        "per_setting": dict(worker.per_setting),
        "state_changes_after_failed_calls": worker.state_changes,
        "slowest_step_s": worker.slowest[0],
        "slowest_action": worker.slowest[1],
        "slowest_setting": worker.slowest[2],
        "slowest_wall_s": worker.slowest_wall,
        "longest_gc_pause_s": worker.gc_clock.longest,
        "rss_start_mb": rss_start,
        "rss_curve_mb": curve,
        "rss_end_mb": (end := _rss_mb()),
        # (the kernel's peak and /proc's resident count pages a little differently: never below the end)
        "rss_peak_mb": max(end, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def run_fuzz(
    actions: int,
    workers: int = 2,
    seed: int = 0,
    env_id: str | Sequence[str] = "SABench-v0",
    *,
    gc_freeze: bool = True,
) -> dict[str, Any]:
    """Run ``actions`` fuzzed actions over ``workers`` processes, cycling every setting of ``env_id``
    (an env id, a benchmark name, ``all``, or a list of them); the merged figures. ``gc_freeze``: move
    what the set-up made (corpora, envs) out of the garbage collector's reach (``gc.freeze()``), as a
    long-running trainer can: a step's time is then the action's, not a full collection's."""
    names = [env_id] if isinstance(env_id, str) else list(env_id)
    plan = tuple(settings(env_ids(names)))
    shares = [actions // workers + (1 if i < actions % workers else 0) for i in range(workers)]
    jobs = [(share, seed * 1000 + i, plan, gc_freeze) for i, share in enumerate(shares)]
    start = time.perf_counter()
    if workers == 1:
        parts = [_worker(jobs[0])]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_worker, jobs))
    wall = time.perf_counter() - start
    exceptions: Counter[str] = Counter()
    per_setting: Counter[str] = Counter()
    samples: dict[str, str] = {}
    for p in parts:
        exceptions.update(p["exceptions"])
        per_setting.update(p["per_setting"])
        samples.update(p["samples"])
    slowest = max(parts, key=lambda p: p["slowest_step_s"])
    return {
        "env": " ".join(names),
        "actions": actions,
        "steps": sum(p["steps"] for p in parts),
        "episodes": sum(p["episodes"] for p in parts),
        "settings": len(plan),
        "settings_seen": len(per_setting),
        "least_actions_per_setting": min(per_setting.values(), default=0),
        "workers": workers,
        "wall_s": wall,
        "actions_per_s": actions / wall,
        "exceptions": dict(exceptions),
        "exception_samples": samples,
        "state_changes_after_failed_calls": sum(p["state_changes_after_failed_calls"] for p in parts),
        "slowest_step_s": slowest["slowest_step_s"],
        "slowest_action": slowest["slowest_action"],
        "slowest_setting": slowest["slowest_setting"],
        "slowest_wall_s": max(p["slowest_wall_s"] for p in parts),
        "longest_gc_pause_s": max(p["longest_gc_pause_s"] for p in parts),
        "gc_freeze": gc_freeze,
        "rss_mb": [
            (round(p["rss_start_mb"]), round(p["rss_end_mb"]), round(p["rss_peak_mb"])) for p in parts
        ],
        "rss_growth_mb": max(p["rss_end_mb"] - p["rss_start_mb"] for p in parts),
        "rss_curve_mb": [p["rss_curve_mb"] for p in parts],
    }


def _report(out: dict[str, Any]) -> Iterator[str]:
    yield (
        f"{out['env']}: {out['actions']:,} actions ({out['steps']:,} steps, {out['episodes']:,} episodes) on "
        f"{out['workers']} workers in {out['wall_s']:.1f} s ({out['actions_per_s']:,.0f} actions/s)"
    )
    yield (
        f"  settings: {out['settings_seen']} of {out['settings']} played "
        f"(the least-played: {out['least_actions_per_setting']:,} actions)"
    )
    yield f"  uncaught exceptions: {sum(out['exceptions'].values())} {out['exceptions'] or ''}"
    yield f"  state changes after failed calls: {out['state_changes_after_failed_calls']}"
    yield (
        f"  slowest step: {1000 * out['slowest_step_s']:.1f} ms of CPU under {out['slowest_setting']} "
        f"({out['slowest_action'][:80]!r}); by the clock {1000 * out['slowest_wall_s']:.1f} ms; "
        f"longest garbage-collector pause {1000 * out['longest_gc_pause_s']:.1f} ms (not charged to a step)"
        + ("" if out["gc_freeze"] else " (no gc.freeze(): full collections of the loaded corpora included)")
    )
    rss = ", ".join(f"{a} -> {b} MB (peak {c})" for a, b, c in out["rss_mb"])
    yield f"  memory per worker, start -> end: {rss}; growth at most {out['rss_growth_mb']:.0f} MB"
    for i, curve in enumerate(out["rss_curve_mb"]):
        yield f"    worker {i}, RSS after each tenth of the run (MB): {' '.join(map(str, curve))}"
    for kind, sample in out["exception_samples"].items():
        yield f"--- {kind}\n{sample}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("env_ids", nargs="*", help="env ids, benchmark names (sabench ...) or 'all'")
    parser.add_argument("--env", action="append", default=[], help="an env id (the older spelling)")
    parser.add_argument("--actions", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    parser.add_argument(
        "--no-gc-freeze",
        dest="gc_freeze",
        action="store_false",
        help="leave the garbage collector as it comes: its full collections scan the loaded corpora "
        "(20-60 ms on a shared 2-core machine) inside whatever step allocates then",
    )
    args = parser.parse_args(argv)
    names = [*args.env_ids, *args.env] or ["SABench-v0"]
    out = run_fuzz(args.actions, args.workers, args.seed, names, gc_freeze=args.gc_freeze)
    for line in _report(out):
        print(line)
    if args.json:
        print(json.dumps({k: v for k, v in out.items() if k != "exception_samples"}))
    failed = (
        out["exceptions"]
        or out["state_changes_after_failed_calls"]
        or out["slowest_step_s"] >= MAX_STEP_S
        or out["rss_growth_mb"] >= MAX_RSS_GROWTH_MB
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
