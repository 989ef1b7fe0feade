"""The ``tooltrap`` command line.

A user's mistake (a misspelt name, a malformed option, a folder that holds another run) ends the command
with one line, ``error: ...``, and exit status 2; a model server that cannot be reached, or a run whose
every episode ended at the provider, with status 3; Ctrl-C with one line saying how to resume, status
130. Tracebacks are for bugs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

#: exit statuses: a user's mistake (as argparse), no model-level result, an interruption (128 + SIGINT)
USAGE, PROVIDER, INTERRUPTED = 2, 3, 130
#: where ``tooltrap report`` writes without ``--out``
DEFAULT_REPORT = "report"


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"error: {message} (see {self.prog} --help)\n")


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _print_table(title: str, summary: dict[str, dict[str, float | int]], report: Any) -> None:
    """A run's summary as ``tooltrap report`` shows its numbers: metric, value with its interval
    (as the report's :meth:`~tooltrap.wrappers.eval.report.BenchmarkReport.column` says), n."""
    from tooltrap.wrappers.eval.table import Column, Estimate, Kind, Table, count, print_tables, text

    table = Table(
        title,
        [text("metric"), Column(f"value [95% CI, {report.cluster_label} bootstrap]", Kind.ROW), count("n")],
    )
    for name, s in summary.items():
        table.add(
            name,
            Estimate(s["value"], s["ci_low"], s["ci_high"], int(s["n"])),
            int(s["n"]),
            row=report.column(name),
        )
    print_tables([table])


def parse_variant_grid(pairs: list[str] | None, grid_file: str | None) -> list[dict[str, Any]] | None:
    """Grid points from ``--variant KEY=VALUE`` (repeating a key adds a value to its axis; the grid is
    the product of the axes) and ``--variants FILE`` (JSON: a list of points, or an object mapping each
    key to its list of values). None when neither is given."""
    import itertools

    from tooltrap.envs.core import EnvUsageError

    points: list[dict[str, Any]] = []
    if grid_file:
        try:
            raw = json.loads(Path(grid_file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise EnvUsageError(f"--variants {grid_file}: {reason}") from None
        if isinstance(raw, dict):
            keys = list(raw)
            axes = [v if isinstance(v, list) else [v] for v in raw.values()]
            points += [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]
        elif isinstance(raw, list) and all(isinstance(p, dict) for p in raw):
            points += raw
        else:
            raise EnvUsageError(f"--variants {grid_file}: expected a list of objects or an object of lists")
    if pairs:
        axes: dict[str, list[Any]] = {}
        for key, value in parse_env_args(pairs, flag="--variant", repeat=True).items():
            axes[key] = value
        points += [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]
    return points or None


def cmd_eval(args: argparse.Namespace) -> int:
    import tooltrap  # noqa: F401  (registers env ids)
    from tooltrap import benchmark_report
    from tooltrap.agents import PREFIXES, make_agent
    from tooltrap.envs.core import EnvUsageError
    from tooltrap.envs.multiagent import ENVS as MULTIAGENT_ENVS
    from tooltrap.envs.multiagent import ROLE_ENV_IDS
    from tooltrap.evaluate import ProviderUnreachableError, evaluate
    from tooltrap.wrappers.eval.report import system_outcome_counts
    from tooltrap.wrappers.eval.run import check_out_dir, read_summary

    if args.env_id in MULTIAGENT_ENVS:
        return _eval_multiagent(args)
    if args.env_id in ROLE_ENV_IDS:
        # a role view is for training: its runs are the multi-agent env's, reported per role
        name, role = ROLE_ENV_IDS[args.env_id]
        raise EnvUsageError(
            f"{args.env_id} is the {role} of {name} as a single-agent env (for training); evaluate it as "
            f"the multi-agent env: tooltrap eval {name} --agent {role}=POLICY"
        )
    # one policy plays a single-agent env: ROLE=POLICY is the multi-agent form
    agents = args.agent or ["act-first"]
    if len(agents) > 1:
        raise EnvUsageError(
            f"{args.env_id} is a single-agent env: give one --agent (got {len(agents)}: {', '.join(agents)})"
        )
    args.agent = agents[0]
    role, eq, _ = args.agent.partition("=")
    if eq and not args.agent.startswith(PREFIXES) and role.isidentifier():
        raise EnvUsageError(
            f"--agent {args.agent}: ROLE=POLICY is for the multi-agent envs ({', '.join(MULTIAGENT_ENVS)}); "
            f"{args.env_id} takes one policy, e.g. --agent gold"
        )
    # what costs nothing is checked before an env is built or a model is loaded
    if args.protocol and (args.variant or args.variants):
        raise EnvUsageError("--protocol chooses the grid points itself; drop --variant/--variants")
    variants = None if args.protocol else parse_variant_grid(args.variant, args.variants)
    if args.base_url and not args.agent.startswith("openai:"):
        raise EnvUsageError(
            f"--base-url is the server of an openai:MODEL agent; --agent {args.agent} has none"
        )
    check_out_dir(Path(args.out))
    agent_kwargs: dict[str, Any] = {"seed": args.seed} if args.agent == "random" else {}
    if args.agent.startswith("openai:") and args.base_url:
        agent_kwargs["base_url"] = args.base_url
    agent_kwargs.update(parse_env_args(args.agent_arg, flag="--agent-arg"))
    env_kwargs = parse_env_args(args.env_arg)
    # a baseline name resolves to the baseline of the benchmark being evaluated (``careful`` is EpiSEM's
    # on an EpiSEM env, SentryBench's on a SentryBench env); a model spec needs no benchmark
    benchmark = _benchmark_of(args.env_id, env_kwargs)
    agent = make_agent(
        args.agent, benchmark=None if args.agent.startswith(PREFIXES) else benchmark, **agent_kwargs
    )
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    if args.agent.startswith("openai:"):  # say where requests go: a wrong default fails every episode
        source = (
            "--base-url"
            if args.base_url
            else "$OPENAI_BASE_URL"
            if "base_url" not in agent_kwargs and os.environ.get("OPENAI_BASE_URL")
            else "--agent-arg base_url"
            if "base_url" in agent_kwargs
            else "the default: pass --base-url for another server"
        )
        log(f"{args.agent}: requests go to {agent.describe().get('base_url')} ({source})")
    common: dict[str, Any] = {
        "seed": args.seed,
        "tasks": args.tasks,
        "env_kwargs": env_kwargs,
        "mitigation": args.mitigation,
        "concurrency": args.concurrency,
        "progress": not args.quiet,
        "log": log,
        "harness": args.harness,
        "resamples": args.resamples,
        "backend": args.backend,
        "ray_address": args.ray_address,
    }
    try:
        if args.protocol:
            from tooltrap.evaluate import evaluate_protocol

            records = evaluate_protocol(args.env_id, agent, args.out, args.protocol, **common)
        else:
            records = evaluate(args.env_id, agent, args.out, variants=variants, **common)
    except ProviderUnreachableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return PROVIDER
    if not records:
        print("error: no episodes were run", file=sys.stderr)
        return 1
    report = benchmark_report(records[0]["benchmark"], args.env_id)
    summary = read_summary(args.out)  # evaluate() wrote it
    model_level = [r for r in records if not r.get("system_outcome")]
    system = system_outcome_counts(records)
    mean_reward = sum(r["reward"] for r in model_level) / len(model_level) if model_level else float("nan")
    reasons = ", ".join(f"{k} {n}" for k, n in system.items())
    defense = f" + {args.mitigation}" if args.mitigation not in (None, "none") else ""
    _print_table(
        f"{args.agent}{defense} on {args.env_id}: {len(model_level)} episodes"
        + (
            f" (+{len(records) - len(model_level)} system-level outcomes, excluded: {reasons})"
            if system
            else ""
        )
        + f", mean reward {mean_reward:.3f}",
        {k: v for k, v in summary.items() if k != "system_outcomes"},
        report,
    )
    if not model_level:
        print(
            f"error: every episode ({len(records)}) ended at the provider ({reasons}): no model-level result. "
            "Check --base-url and the server; rerun the same command to retry them.",
            file=sys.stderr,
        )
        return PROVIDER
    return 0


def parse_role_agents(env_id: str, specs: list[str]) -> dict[str, str]:
    """``--agent ROLE=POLICY`` flags of a multi-agent env: role -> policy spec, in the env's role order,
    the env's scripted default for each role not given.

    Raises:
        UnknownNameError: A role the env does not have (with a did-you-mean).
        EnvUsageError: A flag without ``ROLE=``, a role given twice, an empty policy.
    """
    from tooltrap.agents.roles import default_policies
    from tooltrap.envs.core import EnvUsageError, UnknownNameError

    defaults = default_policies(env_id)
    roles = list(defaults)
    given: dict[str, str] = {}
    for spec in specs:
        role, eq, policy = spec.partition("=")
        if not eq:
            raise EnvUsageError(
                f"--agent {spec}: {env_id} is a multi-agent env; give ROLE=POLICY for each role you set "
                f"(roles: {', '.join(roles)}), e.g. --agent {roles[0]}={defaults[roles[0]]}"
            )
        role = role.strip()
        if role not in roles:
            raise UnknownNameError(f"role of {env_id}", role, roles, hint=f"Roles: {', '.join(roles)}.")
        if role in given:
            raise EnvUsageError(
                f"--agent {role}= is given twice ({given[role]} and {policy}): one policy per role"
            )
        if not policy:
            raise EnvUsageError(f"--agent {spec}: name the {role}'s policy, e.g. {role}={defaults[role]}")
        given[role] = policy
    return {role: given.get(role, defaults[role]) for role in roles}


def _eval_multiagent(args: argparse.Namespace) -> int:
    """``tooltrap eval`` of a multi-agent env: one policy per role (see :func:`parse_role_agents`)."""
    from tooltrap._multiagent import evaluate_roles
    from tooltrap._schedulers import ProviderUnreachableError
    from tooltrap.agents.roles import describe_policy, make_role_policy
    from tooltrap.envs.core import EnvUsageError
    from tooltrap.wrappers.eval.run import check_out_dir, read_summary

    env_id = args.env_id
    # what the multi-agent runner does not do is refused before anything runs, naming the flag
    unsupported = [
        (args.protocol, "--protocol"),
        (args.variant or args.variants, "--variant/--variants"),
        (args.mitigation not in (None, "none"), "--defense (the arena's gate is a role: --agent gate=...)"),
        (args.harness != "native", "--harness"),
        (args.backend != "local" or args.ray_address, "--backend ray/--ray-address (use --concurrency)"),
    ]
    for given, flag in unsupported:
        if given:
            raise EnvUsageError(f"{flag} does not apply to the multi-agent env {env_id}")
    specs = parse_role_agents(env_id, args.agent)
    models = [role for role, spec in specs.items() if spec.startswith(("openai:", "hf:"))]
    if args.base_url and not any(specs[r].startswith("openai:") for r in models):
        raise EnvUsageError("--base-url is the server of an openai:MODEL role; no role is played by one")
    agent_kwargs = parse_env_args(args.agent_arg, flag="--agent-arg")
    if agent_kwargs and not models:
        raise EnvUsageError("--agent-arg sets a model role's options; every role here is scripted")
    check_out_dir(Path(args.out))
    env_kwargs = parse_env_args(args.env_arg)
    policies: dict[str, tuple[str, Any]] = {}
    identities: dict[str, dict[str, Any]] = {}
    for role, spec in specs.items():
        kwargs = dict(agent_kwargs) if role in models else {}
        if spec.startswith("openai:") and args.base_url:
            kwargs["base_url"] = args.base_url
        policy = make_role_policy(env_id, role, spec, **kwargs)
        policies[role] = (spec, policy)
        # how a model is reached may change between a run and its resumption: not part of its identity
        identities[role] = {k: v for k, v in describe_policy(policy, spec).items() if k != "base_url"}
        if spec.startswith("openai:"):
            print(f"{role}={spec}: requests go to {policy.describe().get('base_url')}", file=sys.stderr)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    try:
        records = evaluate_roles(
            env_id,
            policies,
            args.out,
            seed=args.seed,
            tasks=args.tasks,
            env_kwargs=env_kwargs,
            identities=identities,
            log=log,
            resamples=args.resamples,
            concurrency=args.concurrency,
            progress=not args.quiet,
        )
    except ProviderUnreachableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return PROVIDER
    if not records:
        print("error: no episodes were run", file=sys.stderr)
        return 1
    from tooltrap import benchmark_report

    report = benchmark_report(env_id)
    summary = read_summary(args.out)
    scored = [r for r in records if not r.get("void") and not r.get("system_outcome")]
    _print_table(
        f"{' '.join(f'{r}={s}' for r, s in specs.items())} on {env_id}: {len(scored)} scored episodes "
        f"(+{len(records) - len(scored)} void or system-level, counted apart)",
        {k: v for k, v in summary.items() if k != "system_outcomes"},
        report,
    )
    if not scored and any(r.get("system_outcome") for r in records):
        print(
            f"error: every episode ({len(records)}) ended at the provider: no model-level result. "
            "Check --base-url and the server; rerun the same command to retry them.",
            file=sys.stderr,
        )
        return PROVIDER
    return 0


def _benchmark_of(env_id: str, env_kwargs: dict[str, Any]) -> str | None:
    """The name of the benchmark ``env_id`` plays (None for an env that is not a tooltrap benchmark).
    The env is built once here, so an env kwarg it does not take is a usage error naming the option."""
    import gymnasium as gym

    from tooltrap import check_env_id
    from tooltrap.envs.core import EnvUsageError

    check_env_id(env_id)
    _check_env_kwargs(env_id, env_kwargs)
    try:
        env = gym.make(env_id, **env_kwargs)
    except (TypeError, ValueError, AttributeError, KeyError, OSError) as exc:
        # an env that does not check a kwarg's type fails on it somewhere inside; the user's only part
        # in it is the --env-arg, so that is what the one line names (without kwargs: a bug, raised)
        if not env_kwargs:
            raise
        raise EnvUsageError(
            f"--env-arg {' '.join(f'{k}={v!r}' for k, v in env_kwargs.items())}: {env_id} cannot be built "
            f"with it ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None
    try:
        benchmark = getattr(env.unwrapped, "benchmark", None)
        return getattr(benchmark, "name", None)
    finally:
        env.close()


def _check_env_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """Every ``--env-arg`` key must be a keyword the env's constructor takes (did-you-mean otherwise);
    an env that takes ``**kwargs`` is left to check its own."""
    import inspect

    from gymnasium.envs.registration import load_env_creator

    from tooltrap import env_spec
    from tooltrap.envs.core import UnknownNameError

    if not env_kwargs:
        return
    spec = env_spec(env_id)
    creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    try:
        parameters = inspect.signature(creator).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    registered = set(spec.kwargs or {})
    for key in env_kwargs:
        if key not in names:
            options = [n for n in names if n not in registered]
            raise UnknownNameError(
                f"--env-arg of {env_id}", key, options, hint=f"Options: {', '.join(options)}."
            )


def parse_env_args(
    pairs: list[str] | None, *, flag: str = "--env-arg", repeat: bool = False
) -> dict[str, Any]:
    """``KEY=VALUE`` pairs to a dict (:func:`tooltrap.envs.core.parse_key_values`); a malformed pair
    raises :class:`~tooltrap.envs.core.EnvUsageError` naming ``flag`` (a one-line usage error)."""
    from tooltrap.envs.core import parse_key_values

    return parse_key_values(pairs, flag=flag, repeat=repeat)


def cmd_report(args: argparse.Namespace) -> int:
    import importlib

    from tooltrap import benchmark_report
    from tooltrap.envs.core import EnvUsageError
    from tooltrap.wrappers.eval.report import (
        load_identities,
        load_records,
        previous_report_runs,
        run_benchmark,
    )

    names = args.names.split(",") if args.names else None
    if names and len(names) != len(args.dirs):
        raise EnvUsageError(f"--names has {len(names)} names for {len(args.dirs)} runs")
    out = Path(args.out or DEFAULT_REPORT)
    if out.exists() and not out.is_dir():
        raise EnvUsageError(f"--out {out} is a file, not a folder")
    for module in args.allow_module:  # the user's explicit trust: only these are ever imported
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise EnvUsageError(f"--allow-module {module}: {exc}") from None
    try:
        runs = load_records(args.dirs, names)
    except FileNotFoundError as exc:
        raise EnvUsageError(str(exc)) from None
    if args.out is None and out.exists() and any(out.iterdir()):
        # the default folder is reused only for a report of the same runs: never mixed with another's files
        previous = previous_report_runs(out)
        if previous != list(runs):
            what = f"a report of {', '.join(previous)}" if previous else "files that are no report"
            raise EnvUsageError(
                f"./{out} already holds {what}: choose a folder for this report with --out DIR"
            )
    found = {
        run_benchmark(d, records, allow_modules=args.allow_module)
        for d, records in zip(args.dirs, runs.values(), strict=True)
    }
    if len({name for name, _ in found}) > 1:
        raise EnvUsageError(
            "the runs belong to different benchmarks ("
            + ", ".join(sorted({name for name, _ in found}))
            + "); report each benchmark separately"
        )
    name, env_id = next(iter(found))
    report_of_benchmark = benchmark_report(name, env_id)
    report = report_of_benchmark.build(
        runs,
        n_resamples=args.resamples,
        seed=args.seed,
        identities=load_identities(args.dirs, list(runs)),
    )
    figures = not args.no_figures
    if figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(
                "matplotlib is not installed (pip install 'tooltrap[plot]'): skipping figures",
                file=sys.stderr,
            )
            figures = False
    written = report_of_benchmark.write(report, out, figures=figures)
    report_of_benchmark.print_terminal(report)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``tooltrap export RUN [RUN ...] --format inspect``: one Inspect AI eval log per run folder."""
    from tooltrap.envs.core import EnvUsageError
    from tooltrap.wrappers.eval.inspect_log import export_inspect

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise EnvUsageError(f"--out {out} is a file, not a folder")
    names = [Path(d).resolve().name for d in args.dirs]
    if len(set(names)) < len(names):  # two runs' logs would take one file name
        raise EnvUsageError(
            f"the runs {', '.join(args.dirs)} share a folder name: export them to different --out folders"
        )
    for run, name in zip(args.dirs, names, strict=True):
        target = out / f"{name}.{args.log_format}"
        print(f"wrote {export_inspect(run, target, log_format=args.log_format)}")
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    """``tooltrap view RUN [RUN ...] [--out DIR]``: a static site of the runs (index, episodes, comparison)."""
    from tooltrap import benchmark_report
    from tooltrap.wrappers.eval.view import build_site, read_run

    runs = [read_run(d, find_report=benchmark_report) for d in args.dirs]
    site = build_site(runs, args.out)
    for run in runs:
        for note in run.notes:
            print(f"{run.directory}: {note}", file=sys.stderr)
    print(
        f"wrote {site.episodes} episode pages of {len(runs)} run(s)"
        + (f" and {len(site.comparisons)} comparison(s)" if site.comparisons else "")
        + f": open {site.index}"
    )
    return 0


def _roles_line(name: str) -> str:
    """``role: policy, ...; role: ...`` of a multi-agent env (the default first), or why not (no PettingZoo)."""
    from tooltrap.agents.roles import default_policies, scripted_policies
    from tooltrap.envs.core import EnvUsageError

    try:
        defaults, table = default_policies(name), scripted_policies(name)
    except EnvUsageError as err:
        return f"({err})"
    return "; ".join(
        f"{role}: " + ", ".join(f"{p} (default)" if p == defaults[role] else p for p in table[role])
        for role in defaults
    )


def _variant_keys(benchmark: Any) -> str:
    """``key (value | value ...; default d), ...`` of a benchmark's variant model: what ``--variant
    KEY=VALUE`` takes on its envs (``none`` when it declares no key)."""
    import typing

    parts = []
    for key, field in benchmark.variant_model.model_fields.items():
        values = (
            typing.get_args(field.annotation) if typing.get_origin(field.annotation) is typing.Literal else ()
        )
        shown = (
            " | ".join(map(str, values))
            if values
            else getattr(field.annotation, "__name__", str(field.annotation))
        )
        default = "" if field.default is None else f"; default {field.default}"
        parts.append(f"{key} ({shown}{default})")
    return ", ".join(parts) or "none"


def cmd_list(args: argparse.Namespace) -> int:
    """Every benchmark with its env ids, variant keys, baseline agents and defenses; then the generic
    agents, the defenses for any benchmark, and the multi-agent envs. Read from the registries."""
    from tooltrap.agents import GENERIC_AGENTS, PREFIXES, baseline_names
    from tooltrap.envs.core import BASELINES, BENCHMARKS
    from tooltrap.envs.multiagent import ENVS as MULTIAGENT_ENVS
    from tooltrap.envs.multiagent import ROLE_ENV_IDS
    from tooltrap.envs.packages import env_ids_by_benchmark
    from tooltrap.wrappers.defenses import DEFENSES

    baseline_names()  # loads every shipped benchmark's baselines
    env_ids = env_ids_by_benchmark()
    width = max(len(n) for n in DEFENSES)
    print("benchmarks (tooltrap eval ENV_ID --agent NAME [--defense NAME] [--variant KEY=VALUE]):")
    for name, ids in env_ids.items():
        cls = BENCHMARKS[name]
        print(f"  {name}")
        print(f"    env ids:      {', '.join(ids) or '(none registered)'}")
        print(f"    variant keys: {_variant_keys(cls)}")
        print(f"    baselines:    {', '.join(BASELINES.get(name, {})) or 'none'}")
        own = [d for d in DEFENSES.values() if name in d.benchmarks]
        print("    defenses:" + ("     none of its own" if not own else ""))
        for entry in own:
            print(f"      {entry.name:{width}s}  {entry.description}")
    print("agents for every benchmark:", ", ".join([*GENERIC_AGENTS, *(f"{p}..." for p in PREFIXES)]))
    generic = [d for d in DEFENSES.values() if not d.benchmarks]
    if generic:
        print("defenses for every benchmark (--defense NAME):")
        for entry in generic:
            print(f"  {entry.name:{width}s}  {entry.description}")
    print("multi-agent envs (tooltrap eval ENV --agent ROLE=POLICY; the multiagent extra):")
    for name in MULTIAGENT_ENVS:
        print(f"  {name}  {_roles_line(name)}")
    print("role envs (single-agent Gymnasium ids, for training):")
    for env_id, (name, role) in ROLE_ENV_IDS.items():
        print(f"  {env_id}  the {role} of {name}, the other roles scripted inside")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve one env id over the OpenEnv protocol (``tooltrap.server``) until Ctrl-C. Everything is checked
    before the server starts: the extra, the env id, every ``--env-arg`` and the limits."""
    from tooltrap.server import ServerConfig, serve

    env_kwargs = parse_env_args(args.env_arg)
    config = ServerConfig(
        env_id=args.env_id,
        env_kwargs=env_kwargs,
        max_sessions=args.max_sessions,
        session_timeout=args.session_timeout,
        max_message_bytes=args.max_message_bytes,
    )
    _benchmark_of(args.env_id, env_kwargs)  # an unknown id or kwarg: the one-line usage error, now

    def ready(url: str) -> None:
        ws = url.replace("http://", "ws://", 1)
        print(f"serving {args.env_id} on {url} (OpenEnv protocol; episodes on {ws}/ws)", flush=True)

    serve(config, host=args.host, port=args.port, fd=args.fd, on_ready=ready)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from tooltrap import __version__

    parser = _Parser(prog="tooltrap", description="Evaluate tool-using agents on tooltrap benchmarks.")
    parser.add_argument("--version", action="version", version=f"tooltrap {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="run an agent over a benchmark's tasks and print the report")
    ev.add_argument("env_id", help="e.g. SABench-Calendar-v0, or a multi-agent env: sabench_dialogue_v0")
    ev.add_argument(
        "--agent",
        action="append",
        default=[],
        help="a scripted baseline (gold, act-first, careful, trusting ...: tooltrap list shows them all), "
        "hf:CHECKPOINT or openai:MODEL (default act-first); on a multi-agent env (sabench_dialogue_v0, "
        "sentry_arena_v0) ROLE=POLICY, once per role you set (the others play the env's scripted policy)",
    )
    ev.add_argument(
        "--out", required=True, help="output folder (episodes.jsonl, summary.json); reruns resume"
    )
    ev.add_argument("--seed", type=int, default=0, help="episode and bootstrap seed")
    ev.add_argument(
        "--tasks", default=None, help="comma-separated globs on task/template ids, or label=value"
    )
    ev.add_argument("--resamples", type=_positive, default=10_000, help="bootstrap resamples (default 10000)")
    ev.add_argument(
        "--defense",
        "--mitigation",
        dest="mitigation",
        default="none",
        help="a registered defense (tooltrap list shows them), or none",
    )
    ev.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="variant grid axis value, e.g. world=safe (repeatable; the grid is the product of the axes)",
    )
    ev.add_argument(
        "--variants", default=None, metavar="FILE", help="grid file (JSON list of points, or key -> values)"
    )
    ev.add_argument(
        "--concurrency",
        type=_positive,
        default=1,
        help="episodes in flight (batched for hf:, threads for openai:; with --backend ray, the number of actors)",
    )
    ev.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="where episodes run: this process (default) or Ray actors (the ray extra), one env and agent each",
    )
    ev.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="the Ray cluster for --backend ray: HOST:PORT of its head node, ray://HOST:PORT, or auto "
        "(default: a local Ray instance)",
    )
    ev.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env kwarg, e.g. tasks_file=my.json or split=test (repeatable)",
    )
    ev.add_argument(
        "--base-url", default=None, help="server root for openai:MODEL agents (default $OPENAI_BASE_URL)"
    )
    ev.add_argument(
        "--agent-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="agent option, e.g. timeout=30, max_retries=2, temperature=0.7 (repeatable)",
    )
    ev.add_argument(
        "--protocol",
        default=None,
        help="an adaptive protocol of the benchmark that picks the grid itself, e.g. sbm (EpiSEM's mask search)",
    )
    ev.add_argument(
        "--harness",
        choices=("native", "react"),
        default="native",
        help="native tool calling, or the prompted ReAct format (Thought / Action / Action Input / "
        "Final Answer, tools by name and one line, at most 5 model calls)",
    )
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.set_defaults(func=cmd_eval)
    rp = sub.add_parser("report", help="the paper's tables and figures for one or more eval folders")
    rp.add_argument("dirs", nargs="+", help="folders written by `tooltrap eval`")
    rp.add_argument(
        "--out",
        default=None,
        help=f"output folder (report.md, report.json, metrics.csv, PNGs; default ./{DEFAULT_REPORT}, used only "
        "when it is new or holds a report of the same runs)",
    )
    rp.add_argument(
        "--names",
        default=None,
        help="comma-separated display names, one per folder (default: the folders' names)",
    )
    rp.add_argument("--resamples", type=_positive, default=10_000, help="bootstrap resamples (default 10000)")
    rp.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    rp.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    rp.add_argument(
        "--allow-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (your benchmark's, which registers its env ids) to read runs of it; nothing "
        "a run folder names is imported otherwise (repeatable)",
    )
    rp.set_defaults(func=cmd_report)
    ex = sub.add_parser("export", help="write run folders in another tool's format (Inspect AI eval logs)")
    ex.add_argument("dirs", nargs="+", metavar="RUN", help="folders written by `tooltrap eval`")
    ex.add_argument(
        "--format",
        dest="export_format",
        choices=("inspect",),
        required=True,
        help="inspect: an Inspect AI eval log per run (the inspect extra), for inspect view",
    )
    ex.add_argument(
        "--out",
        default="logs",
        help="folder for the logs, one per run named after its folder (default: logs, where inspect view looks)",
    )
    ex.add_argument(
        "--log-format",
        choices=("eval", "json"),
        default="eval",
        help="Inspect's .eval archive (default) or one .json file",
    )
    ex.set_defaults(func=cmd_export)
    vw = sub.add_parser(
        "view", help="a static site of run folders: each run's episodes, each episode's trace, comparisons"
    )
    vw.add_argument("dirs", nargs="+", metavar="RUN", help="folders written by `tooltrap eval`")
    vw.add_argument(
        "--out",
        default="view",
        help="folder for the site, new, empty or a previous view (default: view); open OUT/index.html",
    )
    vw.set_defaults(func=cmd_view)
    ls = sub.add_parser(
        "list",
        help="list each benchmark's env ids, variant keys, agents and defenses, then the multi-agent envs",
    )
    ls.set_defaults(func=cmd_list)
    from tooltrap import server

    sv = sub.add_parser(
        "serve", help="serve an env over the OpenEnv protocol (WebSocket episodes, HTTP routes)"
    )
    sv.add_argument("env_id", help="e.g. SABench-Calendar-v0 (tooltrap list shows them all)")
    sv.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    sv.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env kwarg, as for tooltrap eval, e.g. split=test (repeatable)",
    )
    sv.add_argument(
        "--max-sessions",
        type=_positive,
        default=server.DEFAULT_MAX_SESSIONS,
        help=f"open WebSocket sessions at most (default {server.DEFAULT_MAX_SESSIONS})",
    )
    sv.add_argument(
        "--session-timeout",
        type=float,
        default=server.DEFAULT_SESSION_TIMEOUT,
        help=f"seconds without a message after which a session is closed (default {server.DEFAULT_SESSION_TIMEOUT:g})",
    )
    sv.add_argument(
        "--max-message-bytes",
        type=_positive,
        default=server.DEFAULT_MAX_MESSAGE_BYTES,
        help=f"largest message or request body in bytes (default {server.DEFAULT_MAX_MESSAGE_BYTES})",
    )
    sv.add_argument(
        "--fd", type=int, default=None, help="serve on this inherited listening socket instead (supervisors)"
    )
    sv.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from tooltrap.envs.core import TooltrapError

    try:
        return args.func(args)
    except KeyboardInterrupt:
        # every record was written whole (see tooltrap._schedulers): the same command resumes
        resume = ": resume with the same command" if args.command == "eval" else ""
        print(f"interrupted{resume}", file=sys.stderr)
        return INTERRUPTED
    except TooltrapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:
        # the reader went away (tooltrap list | head): what it read was whole; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
