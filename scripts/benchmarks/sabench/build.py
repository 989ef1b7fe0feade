"""Regenerate the packaged SABench task files from the template generators.

Usage: python scripts/build.py sabench [DOMAIN ...]   (default: every domain with templates)

Adding a template touches one folder (``templates/<domain>/``): this script regenerates the task
files, the template table (docs/sabench_templates.md) and the counts (data/manifest.json) that the
tests read; tests/sabench/test_corpus.py checks that all three are current.
"""

from __future__ import annotations

import sys

from tooltrap.envs.sabench.authoring.templates.registry import (
    DOCS_TABLE,
    MANIFEST,
    render_manifest,
    render_table,
    templates,
    write,
)
from tooltrap.envs.sabench.task import DOMAINS

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help=f"default: all ({', '.join(DOMAINS)})")
    domains = parser.parse_args(argv).domains or list(DOMAINS)
    for domain in domains:
        path = write(domain)
        found = templates(domain)
        n = sum(t.n_tasks for t in found)
        print(f"{domain}: {len(found)} templates, {n} tasks -> {path}")
    DOCS_TABLE.write_text(render_table(DOMAINS), encoding="utf-8")
    print(f"template table -> {DOCS_TABLE}")
    MANIFEST.write_text(render_manifest(), encoding="utf-8")
    print(f"counts -> {MANIFEST}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
