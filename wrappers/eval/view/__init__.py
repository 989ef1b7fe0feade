"""``tooltrap view``: a static site of evaluation runs, opened from disk (no server, no network).

* :func:`read_run` reads one run folder (through :mod:`~tooltrap.wrappers.eval.run`, the folder's one
  owner) with its benchmark's report object, whose ``view`` hooks (:mod:`.hooks`) say what differs per
  benchmark;
* :func:`build_site` writes the site: an index per run (the summary metrics with their intervals,
  every episode as a row filterable by outcome, label, template and variant, sortable by reward), a
  page per episode (the conversation, each call with its arguments and result, each write as a before
  -> after diff, the verdict with each violated rule pointing at its call, the reward components, the
  variant), and a comparison of the runs of each benchmark (task by task, and the tasks whose
  outcomes differ).

The pages are rendered ahead of time by Jinja2 with autoescaping (the ``view`` extra: ``pip install
'tooltrap[view]'``; imported only when a site is built); the index's rows travel as JSON in a
``<script type="application/json">`` element, drawn by a small local script with ``textContent``.
Every string a model produced is escaped; the pages forbid inline scripts and every network request
(Content-Security-Policy). The same runs build byte-identical sites.
"""

from __future__ import annotations

from .build import MARKER, SiteSummary, ViewFolderError, ViewRun, build_site, read_run
from .hooks import Finding, Outcome, ViewHooks, hooks_of

__all__ = [
    "MARKER",
    "Finding",
    "Outcome",
    "SiteSummary",
    "ViewFolderError",
    "ViewHooks",
    "ViewRun",
    "build_site",
    "hooks_of",
    "read_run",
]
