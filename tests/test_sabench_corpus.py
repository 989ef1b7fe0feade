"""The calendar corpus: counts, coverage, variation, freshness of the packaged data, self-check."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import gymnasium as gym
import pytest

from tooltrap.envs.sabench import STATE_STRUCTURES, TRAP_FAMILIES, packaged_tasks
from tooltrap.envs.sabench.selfcheck import check_task
from tooltrap.envs.sabench.templates.registry import DOCS_TABLE, render, render_table, templates

TASKS = packaged_tasks("calendar")


def test_packaged_json_is_what_the_generators_make():
    from importlib import resources

    packaged = (
        resources.files("tooltrap.envs.sabench").joinpath("data/calendar.json").read_text(encoding="utf-8")
    )
    assert packaged == render("calendar"), "run: python scripts/build_corpus.py"


def test_template_table_is_current():
    assert DOCS_TABLE.read_text(encoding="utf-8") == render_table(), "run: python scripts/build_corpus.py"


def test_counts_and_coverage():
    by_template = Counter(t.template_id for t in TASKS)
    assert len(by_template) >= 16
    assert len(TASKS) >= 67
    assert all(4 <= n <= 5 for n in by_template.values()), by_template
    assert sum(t.labels.ambiguous for t in TASKS) >= 15
    cells = {(t.labels.state_structure, t.labels.trap_family) for t in TASKS}
    assert cells == set(itertools.product(STATE_STRUCTURES, TRAP_FAMILIES))
    assert all(t.domain == "calendar" for t in TASKS)


def test_template_metadata_matches_tasks():
    for template in templates("calendar"):
        tasks = [t for t in TASKS if t.template_id == template.id]
        assert len(tasks) == template.n_tasks
        assert template.trap.strip()
        for t in tasks:
            assert (t.labels.trap_family, t.labels.state_structure, t.labels.ambiguous) == (
                template.trap_family,
                template.state_structure,
                template.ambiguous,
            )


def test_tasks_vary_entities_state_and_wording():
    for template_id in {t.template_id for t in TASKS}:
        tasks = [t for t in TASKS if t.template_id == template_id]
        instructions = {t.instruction for t in tasks}
        states = {json.dumps(t.initial_state.model_dump(), sort_keys=True) for t in tasks}
        assert len(instructions) == len(tasks), template_id
        assert len(states) == len(tasks), template_id


@pytest.mark.parametrize("task_id", TASKS.ids)
def test_self_check(task_id):
    env = gym.make("SABench-Calendar-v0").unwrapped
    report = check_task(env, TASKS.get(task_id))
    assert report.ok, report.problems
