"""Tests that need the optional data outside the repository say, when they skip, which set is missing and
where it comes from."""

from __future__ import annotations

import pytest

from tests.shared_data import AGENTPROP_RELEASE, SENTRY_DATA, needs


def test_a_missing_data_set_skips_naming_it_and_its_source():
    mark = needs(AGENTPROP_RELEASE / "no-such-file.json")
    assert mark.args == (True,)
    reason = mark.kwargs["reason"]
    assert "agenthallu-bench" in reason and "PROVENANCE.md" in reason and "no-such-file.json" in reason
    assert "SentryBench" in needs(SENTRY_DATA / "missing.csv").kwargs["reason"]


def test_a_path_outside_the_data_sets_is_a_mistake():
    with pytest.raises(ValueError, match="not inside an optional data set"):
        needs(AGENTPROP_RELEASE.parent.parent / "elsewhere")
