"""Compile the EpiSEM families into the packaged corpus.

Usage: python scripts/build.py episem [--check]

Reads ``envs/episem/authoring/families/<domain>/*.json``, compiles every twin pair (deriving each atom's
exposures by running the read tools), and writes ``envs/episem/data/tasks.json`` and the counts in
``envs/episem/data/manifest.json``. ``--check`` writes nothing and fails when either file is stale
(tests/episem/test_corpus.py runs the same comparison).
"""

from __future__ import annotations

import sys

from tooltrap.envs.episem.benchmark import DATA_DIR, build_tasks, render_manifest, render_tasks

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the packaged corpus is stale")
    args = parser.parse_args(argv)
    tasks = build_tasks()
    outputs = {
        DATA_DIR / "tasks.json": render_tasks(tasks),
        DATA_DIR / "manifest.json": render_manifest(tasks),
    }
    if args.check:
        stale = [
            str(p) for p, text in outputs.items() if not p.exists() or p.read_text(encoding="utf-8") != text
        ]
        if stale:
            print("stale: " + ", ".join(stale) + " (run python scripts/build.py episem)", file=sys.stderr)
            return 1
        print(f"{len(tasks)} pairs: packaged corpus is current")
        return 0
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
        print(f"-> {path}")
    families = len({t.family_id for t in tasks})
    print(f"{families} families, {len(tasks)} pairs, {2 * len(tasks)} worlds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
