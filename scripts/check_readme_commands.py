"""Run the README's commands in order, in a fresh clone, as a newcomer would.

Every line of every ```bash block of README.md is a command (a line ending in ``\\`` continues on the
next), run with bash in a fresh ``git clone`` of this repository, with the clone's ``.venv`` first on the
PATH (as after ``source .venv/bin/activate``) and ``HF_HUB_OFFLINE=1``. A command that cannot run on a
CI machine is skipped and listed with the reason (:data:`SKIPS`: a GPU, a model server or a cluster that
is not there, a server that would run until stopped); the development set-up runs without its test
suite (CI has just run it). Exit 1 at the first command that fails, showing it and its output.

Usage: python scripts/check_readme_commands.py [--readme README.md] [--keep DIR] [--list]
(``--list`` prints the commands and what would be skipped, running nothing).
"""

from __future__ import annotations

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (pattern, why it is not run here): the first that matches a command skips it
SKIPS: tuple[tuple[str, str], ...] = (
    (r"--base-url http://(?!127\.0\.0\.1)", "needs a model server (a vLLM host) that is not here"),
    (r"\bopenai:", "needs a model server"),
    (r"--ray-address|^ray start", "needs a Ray cluster"),
    (
        r"gpu_train\.sh|--config configs/|training\.(sft|grpo) .*--config",
        "a GPU run (the configs stop at once on a CPU)",
    ),
    (r"^tooltrap serve\b", "a server that runs until stopped (tests/server/ runs it)"),
    (r"^inspect view( |$)(?!bundle)", "a local web server that runs until stopped"),
    (r"^pip install\b", "an install line for an extra (the development set-up installs them all)"),
    (
        r"learning_curve\.py",
        "trains for several minutes (CI checks its recorded output: tests/test_readme.py)",
    ),
)
#: the development set-up's test suite: CI has just run it; the install part runs
TEST_SUITE = " && .venv/bin/python -m pytest"


def commands(readme: str) -> list[str]:
    """The README's bash commands in order (continuations joined, comments and blank lines dropped)."""
    found: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.DOTALL):
        pending = ""
        for line in block.splitlines():
            if pending:
                line = pending + " " + line.strip()
                pending = ""
            if line.rstrip().endswith("\\"):
                pending = line.rstrip()[:-1].rstrip()
                continue
            code = _strip_comment(line).strip()
            if code:
                found.append(code)
    return found


def _strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` inside quotes is kept)."""
    quote = None
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def skip_reason(command: str) -> str | None:
    return next((why for pattern, why in SKIPS if re.search(pattern, command)), None)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--readme", default=str(ROOT / "README.md"))
    parser.add_argument("--keep", default=None, help="run in this folder (kept) instead of a temporary one")
    parser.add_argument("--list", action="store_true", help="print the plan, run nothing")
    args = parser.parse_args(argv)
    plan = commands(Path(args.readme).read_text(encoding="utf-8"))
    if args.list:
        for command in plan:
            why = skip_reason(command)
            print(f"{'skip' if why else 'run '}  {command}" + (f"   ({why})" if why else ""))
        return 0
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tooltrap-readme-"))
    clone = work / "tooltrap"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    venv = clone / ".venv" / "bin"
    env = {
        **os.environ,
        "PATH": f"{venv}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(clone / ".venv"),
        "HF_HUB_OFFLINE": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("PYTHONPATH", None)
    skipped: list[tuple[str, str]] = []
    for n, command in enumerate(plan, 1):
        why = skip_reason(command)
        if why:
            skipped.append((command, why))
            continue
        run = command.replace(TEST_SUITE, "") if TEST_SUITE in command else command
        print(f"[{n}/{len(plan)}] {run}", flush=True)
        done = subprocess.run(
            ["bash", "-c", run], cwd=clone, env=env, capture_output=True, text=True, timeout=1800
        )
        if done.returncode != 0:
            print(
                f"FAILED (exit {done.returncode}): {run}\n{(done.stdout + done.stderr)[-4000:]}",
                file=sys.stderr,
            )
            return 1
    for command, why in skipped:
        print(f"skipped: {command}  ({why})")
    print(f"{len(plan) - len(skipped)} README commands ran in order in a fresh clone; {len(skipped)} skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
