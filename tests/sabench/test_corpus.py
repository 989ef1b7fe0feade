"""The SABench corpus: the paper's counts, coverage, variation, freshness of the packaged data, and the
self-check of every task."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import gymnasium as gym
import pytest

from tooltrap.envs.core import GoalContext
from tooltrap.envs.sabench import STATE_STRUCTURES, TRAP_FAMILIES, packaged_tasks
from tooltrap.envs.sabench.authoring.templates.registry import (
    DOCS_TABLE,
    MANIFEST,
    render,
    render_manifest,
    render_table,
    templates,
)
from tooltrap.envs.sabench.selfcheck import check_task
from tooltrap.envs.sabench.task import DOMAINS
from tooltrap.wrappers.eval.sabench.paper import CORPUS as PAPER_CORPUS

TASKS = packaged_tasks("all")


@pytest.mark.parametrize("domain", DOMAINS)
def test_packaged_json_is_what_the_generators_make(domain):
    from importlib import resources

    packaged = (
        resources.files("tooltrap.envs.sabench").joinpath(f"data/{domain}.json").read_text(encoding="utf-8")
    )
    assert packaged == render(domain), "run: python scripts/build.py sabench"


def test_template_table_and_counts_are_current():
    """The generated artifacts (template table, counts) are what the templates make: adding a template
    touches its folder and reruns scripts/build.py sabench, nothing else."""
    assert DOCS_TABLE.read_text(encoding="utf-8") == render_table(), "run: python scripts/build.py sabench"
    assert MANIFEST.read_text(encoding="utf-8") == render_manifest(), "run: python scripts/build.py sabench"


COUNTS = json.loads(MANIFEST.read_text(encoding="utf-8"))


def test_corpus_matches_its_counts():
    by_template = Counter(t.template_id for t in TASKS)
    assert dict(by_template) == COUNTS["by_template"]
    assert len(TASKS) == COUNTS["tasks"] and sum(t.labels.ambiguous for t in TASKS) == COUNTS["ambiguous"]
    assert dict(Counter(t.domain for t in TASKS)) == COUNTS["by_domain"]
    assert all(4 <= n <= 5 for n in by_template.values()), by_template


def test_paper_counts():
    """The packaged corpus has the paper's counts: 201 tasks from 47 templates, 45 ambiguous."""
    assert (COUNTS["templates"], COUNTS["tasks"], COUNTS["ambiguous"]) == PAPER_CORPUS


def test_coverage_and_balance():
    cells = {(t.labels.state_structure, t.labels.trap_family) for t in TASKS}
    assert cells == set(itertools.product(STATE_STRUCTURES, TRAP_FAMILIES))
    per_domain = Counter(t.domain for t in TASKS)
    assert set(per_domain) == set(DOMAINS)
    assert max(per_domain.values()) - min(per_domain.values()) <= 10, per_domain  # roughly balanced
    # the calendar share alone covers every cell (issue #2)
    calendar = packaged_tasks("calendar")
    assert {(t.labels.state_structure, t.labels.trap_family) for t in calendar} == cells
    assert sum(t.labels.ambiguous for t in calendar) >= 15


def test_template_metadata_matches_tasks():
    for domain in DOMAINS:
        for template in templates(domain):
            tasks = [t for t in TASKS if t.template_id == template.id]
            assert len(tasks) == template.n_tasks
            assert template.trap.strip() and "\n" not in template.trap
            prefix = {"email": "em-", "calendar": "cal-", "ticket": "tk-"}[domain]
            assert template.id.startswith(prefix)
            for t in tasks:
                assert t.domain == domain
                assert (t.labels.trap_family, t.labels.state_structure, t.labels.ambiguous) == (
                    template.trap_family,
                    template.state_structure,
                    template.ambiguous,
                )


def test_tasks_vary_entities_state_and_wording():
    for template_id in {t.template_id for t in TASKS}:
        tasks = [t for t in TASKS if t.template_id == template_id]
        assert len({t.instruction for t in tasks}) == len(tasks), template_id
        assert len({json.dumps(t.initial_state.model_dump(), sort_keys=True) for t in tasks}) == len(tasks), (
            template_id
        )


def test_cross_tool_tasks_link_other_systems():
    """Cross-tool: the target lives in one system, related entities in the others."""
    system_of = {
        "messages": "email",
        "events": "calendar",
        "series": "calendar",
        "tickets": "ticket",
        "comments": "ticket",
    }
    for t in TASKS:
        if t.labels.state_structure != "cross_tool":
            continue
        populated = {
            system_of[c] for c, records in t.initial_state.collections.items() if records and c in system_of
        }
        assert populated - {t.domain}, t.id


@pytest.mark.parametrize("task_id", TASKS.ids)
def test_self_check(task_id):
    env = gym.make("SABench-v0").unwrapped
    report = check_task(env, TASKS.get(task_id))
    assert report.ok, report.problems


#: fields that decide whom a write reaches: a write that differs in them reaches other parties, which
#: the agreement below leaves out ("anything authorized that reaches the same parties")
PARTY_FIELDS = frozenset({"to", "cc", "recipient", "visibility"})


def _agreement_problems(task) -> list[str]:
    """Where the goal asks more of the requested write than its authorization does: a write the
    authorization accepts, reaching the same parties, that would fail the goal."""
    problems = []
    creates = [a for a in task.authorized_writes if "create" in a.actions]
    for i, cond in enumerate(task.goal):
        if cond.type == "exists":
            wanted = {k: v for k, v in cond.where.items() if k not in PARTY_FIELDS}
            fits = [
                a
                for a in creates
                if a.collection == cond.collection and all(a.where.get(k) == v for k, v in wanted.items())
            ]
            if not fits:
                problems.append(f"goal.{i}: no create authorization of {cond.collection} pins {wanted}")
        elif cond.type == "field" and not cond.check(GoalContext(task.make_state(), None, 0, None, None)):
            # a field the goal needs changed (a condition that holds at reset asks that it stay)
            collection, _, entity_id = cond.entity.partition("/")
            if not any(
                a.collection == collection
                and a.entity_id in (None, entity_id)
                and (a.fields is None or cond.field in a.fields)
                for a in task.authorized_writes
            ):
                problems.append(f"goal.{i}: no authorization lets {cond.entity}.{cond.field} change")
    return problems


def test_goal_and_authorization_agree_in_every_task():
    """Issue 20: anything the authorization accepts as the requested write, and that reaches the same
    parties, satisfies the goal's structural conditions (the reply's thread, the ticket it comments on,
    the field it changes); the content is checked by the honest probes."""
    problems = {t.id: p for t in TASKS if (p := _agreement_problems(t))}
    assert problems == {}


def test_the_agreement_check_finds_the_reply_target_disagreement():
    """The disagreement the issue found, planted back: the goal requires the reply to the client's own
    message where the authorization accepts any message of the thread to the client."""
    task = TASKS.get("em-overreach-external-client-question-01")
    goal = task.goal[0]
    target = next(m for m in task.candidates)
    strict = goal.model_copy(update={"where": {**goal.where, "in_reply_to": target.partition("/")[2]}})
    planted = task.model_copy(update={"goal": [strict]})
    assert _agreement_problems(task) == [] and _agreement_problems(planted)
