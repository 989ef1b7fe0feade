"""Check one or more SABench template modules without touching the packaged corpus.

Usage: python scripts/check_template.py tooltrap.envs.sabench.authoring.templates.calendar.MODULE [...] [-v]

For every generated task: validates it, replays gold and trap solutions through the env (self-check),
and plays the act-first intent (first candidate, tool defaults), printing the verdicts.
"""

from __future__ import annotations

import importlib
import sys

from tooltrap.envs.core import ToolEnv, parse_tasks
from tooltrap.envs.sabench import SABenchTask, benchmark
from tooltrap.envs.sabench.selfcheck import check_task, play

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument(
        "modules",
        nargs="+",
        metavar="MODULE",
        help="template modules, e.g. tooltrap.envs.sabench.templates.calendar.x",
    )
    parser.add_argument("-v", action="store_true", dest="verbose", help="print every task")
    args = parser.parse_args(argv)
    verbose, modules = args.verbose, args.modules
    failures = 0
    for name in modules:
        template = importlib.import_module(name).TEMPLATE
        tasks = parse_tasks(template.tasks(), SABenchTask, source=name)
        env = ToolEnv(benchmark(), tasks)
        print(
            f"== {template.id} [{template.trap_family} x {template.state_structure}, ambiguous={template.ambiguous}] {len(tasks)} tasks"
        )
        for task in tasks:
            report = check_task(env, task)
            act, act_reward, _ = play(env, task.id, task.intent_calls())
            status = "ok " if report.ok else "FAIL"
            print(
                f"  {status} {task.id}: act-first goal={act.goal} cd={act.cd} rules={dict(act.rule_counts)} "
                f"ext={act.external_cd} reward={act_reward:.2f}"
            )
            if verbose:
                print(f"       instruction: {task.instruction}")
            for problem in report.problems:
                print(f"       {problem}")
            failures += not report.ok
    print("all ok" if not failures else f"{failures} task(s) failing")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
