"""The optional data some tests read, outside the repository (never copied into it), and why a test that
needs it is skipped where it is missing.

``../shared/data`` beside the repository holds two sets, each with a PROVENANCE.md:

* ``agentprop-release/``: the AgentProp-Bench authors' released results (MIT), from
  github.com/bhaskargurram-ai/agenthallu-bench at commit 763a14c (tag v0.2.0 holds the same data): the
  per-session result rows and the paper's tables, read by the reproduction tests and scripts;
* ``sentry/``: the public datasets SentryBench's loaders read (disaster-response messages, emergency
  call transcripts, injection payloads), each with its source and licence in PROVENANCE.md.

A fresh clone without them runs every other test; these skip, saying which set is missing and where it
comes from (``pytest -rs`` lists them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: ../shared/data, beside the repository
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
AGENTPROP_RELEASE = SHARED_DATA / "agentprop-release"
SENTRY_DATA = SHARED_DATA / "sentry"

_SOURCES = {
    AGENTPROP_RELEASE: (
        "the AgentProp-Bench authors' released results (MIT; github.com/bhaskargurram-ai/agenthallu-bench, "
        "tag v0.2.0), expected at ../shared/data/agentprop-release (see its PROVENANCE.md)"
    ),
    SENTRY_DATA: (
        "the public datasets SentryBench's loaders read, expected at ../shared/data/sentry (each file's "
        "source and licence in its PROVENANCE.md)"
    ),
}


def needs(path: Path) -> pytest.MarkDecorator:
    """Skip unless ``path`` (inside one of the optional data sets) exists, naming the set and its source."""
    source = next((text for root, text in _SOURCES.items() if path == root or root in path.parents), None)
    if source is None:
        raise ValueError(f"{path} is not inside an optional data set ({', '.join(map(str, _SOURCES))})")
    return pytest.mark.skipif(not path.exists(), reason=f"needs {source}: {path.name} is not there")
