"""``tooltrap view`` in a real browser (Debian's chromium driven by Playwright): the site of runs of all
four benchmarks and both multi-agent envs opens from disk, its index filters by outcome and sorts by
reward, a failing episode shows the violated rule pointing at its call and the write's before -> after
diff, the comparison lists the tasks whose outcomes differ, model-written HTML renders as text and runs
nothing, and no page asks for anything that is not a ``file://`` URL.

The runs, the site and the docs' screenshots come from ``scripts/view_screenshots.py``, run here into a
temporary folder."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")

from tooltrap import benchmark_report  # noqa: E402
from tooltrap.cli import main  # noqa: E402
from tooltrap.envs.core import Agent  # noqa: E402
from tooltrap.evaluate import evaluate  # noqa: E402
from tooltrap.wrappers.eval.run import EPISODES, read_episodes  # noqa: E402
from tooltrap.wrappers.eval.view.build import compare_key, episode_file, system_outcome  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("view_screenshots", ROOT / "scripts" / "view_screenshots.py")
assert _spec is not None and _spec.loader is not None
shots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shots)

pytestmark = pytest.mark.skipif(
    not Path(shots.CHROMIUM).exists(), reason=f"{shots.CHROMIUM} is missing (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> dict[str, Path]:
    """The screenshot script's runs, site and PNGs, in a temporary folder."""
    root = tmp_path_factory.mktemp("view")
    assert shots.main(["--out", str(root / "shots"), "--work", str(root / "work")]) == 0
    return {"shots": root / "shots", "runs": root / "work" / "runs", "site": root / "work" / "site"}


@pytest.fixture(scope="module")
def browser():
    """One chromium for the module; its refused off-disk requests are checked after every test."""
    with shots.browser() as (context, refused):
        yield context, refused


@pytest.fixture
def page(browser):
    context, refused = browser
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.dialogs, tab.errors = dialogs, errors
    yield tab
    tab.close()
    assert not refused, f"a page asked for URLs off disk: {refused}"
    assert not errors, f"a page's script failed: {errors}"


def _folder(work: dict[str, Path], name: str) -> Path:
    return work["site"] / "runs" / shots.run_folders(work["site"])[name]


def _open_index(page: Any, folder: Path) -> None:
    page.goto((folder / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")


def _rows(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "table.rows tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))"
    )


def _column(page: Any, label: str) -> int:
    heads = page.eval_on_selector_all("table.rows thead th", "hs => hs.map(h => h.textContent)")
    return heads.index(label)


def test_the_screenshot_script_shows_an_index_and_a_failing_episode_per_benchmark(work):
    for name in shots.SHOWN:
        for kind in ("index", "episode"):
            png = work["shots"] / f"{name}-{kind}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000, png
    assert (work["shots"] / "compare-index.png").exists() and (work["shots"] / "compare-task.png").exists()


def test_the_index_filters_by_outcome_sorts_by_reward_and_opens_a_failing_episode(work, page):
    records = read_episodes(work["runs"] / "sabench" / EPISODES)
    folder = _folder(work, "sabench")
    _open_index(page, folder)
    assert len(_rows(page)) == len(records)
    # filter: collateral damage
    page.select_option("select[data-col='CD']", "1")
    rows = _rows(page)
    with_cd = [r for r in records if r["verdict"]["cd"]]
    assert 0 < len(rows) == len(with_cd) < len(records)
    task_col = _column(page, "task")
    assert {r[task_col] for r in rows} == {r["task_id"] for r in with_cd}
    # sort by reward, highest first, then lowest first
    reward_col = _column(page, "reward")
    page.click("th[data-sort='reward']")
    shown = [float(r[reward_col]) for r in _rows(page)]
    assert shown == sorted((round(r["reward"], 3) for r in with_cd), reverse=True)
    page.click("th[data-sort='reward']")
    shown = [float(r[reward_col]) for r in _rows(page)]
    assert shown == sorted(round(r["reward"], 3) for r in with_cd)
    # the filter is in the page's address: going back from an episode keeps it
    assert "f" in page.url.partition("#")[2]
    # open the episode with the lowest reward
    worst = min(with_cd, key=lambda r: (r["reward"], with_cd.index(r)))
    page.click(f"table.rows tbody a:text-is('{worst['task_id']}')")
    page.wait_for_load_state()
    verdict = page.locator("#verdict")
    violations = worst["verdict"]["violations"]
    assert violations
    for violation in violations:
        assert verdict.get_by_text(violation["rule"], exact=True).first.is_visible()
        link = verdict.locator(f"a[href='#call-{violation['call_index']}']").first
        assert link.is_visible()
    # the violating write's diff: the call's card holds a table with every changed field before -> after
    violation = violations[0]
    card = page.locator(f"#call-{violation['call_index']}")
    verdict.locator(f"a[href='#call-{violation['call_index']}']").first.click()
    assert page.url.endswith(f"#call-{violation['call_index']}")
    diff = card.locator(".write.violates table.diff").first
    assert diff.is_visible()
    call = next(
        c for s in worst["trace"]["steps"] for c in s["calls"] if c["index"] == violation["call_index"]
    )
    write = next(w for w in call["writes"] if w["entity"] == violation["entity"])
    text = diff.inner_text()
    for name in write["fields"][:5]:
        assert name in text
        after = (write.get("after") or {}).get(name)
        if isinstance(after, str):
            assert after in text
    page.go_back()  # the jump to the call
    page.go_back()  # the episode page
    page.wait_for_selector("body[data-ready='1']")
    assert page.input_value("select[data-col='CD']") == "1"  # the filter came back with the page


def _failing(name: str, records: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    """The first record of a run whose benchmark's hooks hold a finding pointing at a call."""
    hooks = benchmark_report(records[0]["benchmark"]).view
    assert hooks is not None, f"{name}: the benchmark's report brings no view hooks"
    for record in records:
        findings = [f for f in hooks.findings(record) if f.calls]
        if findings:
            return record, findings
    raise AssertionError(f"{name}: no failing episode with a finding that points at a call")


@pytest.mark.parametrize("name", ["sabench", "episem", "sentry", "agentprop", "dialogue", "arena"])
def test_a_failing_episode_of_every_benchmark_shows_its_rule_pointing_at_its_call(work, page, name):
    records = read_episodes(work["runs"] / name / EPISODES)
    record, findings = _failing(name, records)
    folder = _folder(work, name)
    _open_index(page, folder)
    page.fill("input[type=search]", record["task_id"])
    page.click(f"table.rows tbody a:text-is('{record['task_id']}')")
    page.wait_for_load_state()
    assert page.url.endswith(episode_file(record)) or episode_file(record) in page.url
    verdict = page.locator("#verdict")
    for finding in findings:
        assert verdict.get_by_text(finding.rule, exact=True).first.is_visible()
        for index in finding.calls:
            assert verdict.locator(f"a[href='#call-{index}']").first.is_visible()
            card = page.locator(f"#call-{index}")
            assert card.is_visible()
            assert card.locator(".call-head .badge.bad").get_by_text(finding.rule, exact=True).count() == 1
    # every call the agent sent is on the page, with its result or its error
    calls = [c for s in record["trace"]["steps"] for c in s["calls"]]
    assert page.locator(".call").count() == len(calls)
    for call in calls:
        card = page.locator(f"#call-{call['index']}")
        assert card.locator(".name").inner_text() == call.get("sent_name", call["name"])
        if not call["ok"]:
            assert call["error"]["type"] in card.locator(".error-type").inner_text()
    # the variant and the reward components are shown, labelled as the privileged view they are
    assert "privileged" in page.locator("#variant").inner_text()
    components = record["reward_components"]
    if record.get("rewards"):
        components = components["assistant"]
    for component in components:
        assert page.locator("#reward").get_by_text(component, exact=True).count() >= 1


def test_the_comparison_lists_the_tasks_whose_outcomes_differ_and_shows_them_side_by_side(work, page):
    act, gold = (read_episodes(work["runs"] / n / EPISODES) for n in ("sabench", "sabench-gold"))
    fields = [o.field for o in benchmark_report("sabench").view.outcomes]

    def signature(record: dict[str, Any]) -> tuple[Any, ...]:
        return (system_outcome(record), *(record["verdict"].get(f) for f in fields))

    by_key = {compare_key(r): r for r in gold}
    differ = {r["task_id"] for r in act if signature(r) != signature(by_key[compare_key(r)])}
    assert 0 < len(differ) < len(act)
    compare = work["site"] / "compare"
    folder = next(p for p in compare.iterdir() if "sabench" in p.name)
    page.goto((folder / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    task_col = _column(page, "task")
    assert {r[task_col] for r in _rows(page)} == differ
    assert page.inner_text("#n-differ") == str(len(differ))
    page.select_option("select[data-col='outcomes differ']", "")
    assert len(_rows(page)) == len(act)
    page.select_option("select[data-col='outcomes differ']", "1")
    task = sorted(differ)[0]
    page.click(f"table.rows tbody a:text-is('{task}')")
    page.wait_for_load_state()
    columns = page.locator(".side-by-side .column")
    assert columns.count() == 2
    assert [columns.nth(i).locator("h2").inner_text() for i in range(2)] == ["sabench", "sabench-gold"]
    # each column links to its run's episode page, which opens
    columns.nth(0).get_by_text("the whole episode").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == task


# -- model-written HTML ------------------------------------------------------------------------------------
def _corpus_payloads() -> list[str]:
    """SentryBench's injection texts that hold HTML (tags such as <tr>, <td>, <name>)."""
    data = json.loads((ROOT / "envs" / "sentry" / "data" / "payloads.json").read_text(encoding="utf-8"))
    found = [p["text"] for p in data if re.search(r"<[a-zA-Z/]", p["text"])]
    assert found, "the corpus holds no HTML payload any more: pick other texts"
    return found


#: payloads that would run script or change the page if they were ever written as HTML
OWN = [
    "<script>window.__pwned = 1; alert('script')</script>",
    "<img src=x onerror=\"window.__pwned = 2; alert('img')\">",
    "</script><script>window.__pwned = 3</script>",
    '<svg onload="window.__pwned = 4">',
    '"><b id="injected">bold</b><a href="javascript:window.__pwned=5">link</a>',
    "<!-- an unclosed comment",
]


class PayloadAgent(Agent):
    """A scripted agent whose raw text, invalid call, write and answer carry the payloads."""

    name = "payloads"

    def __init__(self, payloads: list[str]) -> None:
        self.payloads = payloads
        self.step = 0
        self.event: str | None = None

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        self.step, self.event = 0, None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.step += 1
        joined = "\n".join(self.payloads)
        self.last_raw = joined  # the model's text, as a format wrapper would keep it
        if self.step == 1:
            return json.dumps({"name": "calendar_list_events", "arguments": {}})
        if self.step == 2:
            self.event = (re.findall(r'"id": "(evt_[^"]+)"', observation) or [None])[0]
            return "not json at all " + OWN[0]  # the env answers with a parse error
        if self.step == 3:
            return json.dumps({"name": OWN[1], "arguments": {"x": OWN[2]}})  # an unknown tool
        if self.step == 4:
            args = {"event_id": self.event, "title": OWN[3], "description": joined, "notify_attendees": False}
            return json.dumps({"name": "calendar_update_event", "arguments": args})
        return json.dumps({"name": "respond", "arguments": {"message": joined}})


def test_model_written_html_renders_as_text_and_runs_nothing(tmp_path, page):
    payloads = [*OWN, *_corpus_payloads()]
    run = tmp_path / "run"
    evaluate(
        "SABench-Calendar-v0", PayloadAgent(payloads), run, tasks="cal-cascade-dependent-*-01", resamples=50
    )
    records = read_episodes(run / EPISODES)
    # the task id and a label are the run folder's to say: an untrusted folder's HTML is text too
    lines = [json.loads(line) for line in (run / EPISODES).read_text().splitlines()]
    lines[0]["task_id"] = OWN[1]
    lines[0]["domain"] = OWN[0]
    (run / EPISODES).write_text("".join(json.dumps(r) + "\n" for r in lines))
    site = tmp_path / "site"
    assert main(["view", str(run), "--out", str(site)]) == 0
    folder = next((site / "runs").iterdir())
    _open_index(page, folder)
    main_text = page.inner_text("main")
    assert OWN[1] in main_text and OWN[0] in main_text
    pages = sorted((folder / "e").glob("*.html"))
    assert len(pages) == len(records)
    for path in pages:
        page.goto(path.as_uri())
        text = page.inner_text("main")
        for payload in OWN:
            assert payload in text, payload
        assert "<td>Unchained Oracle</td>" in text or not any("Unchained" in p for p in payloads)
        # the unknown tool's name (an <img onerror>) is shown as the call's name, as text
        assert page.locator(".call .name").get_by_text(OWN[1], exact=True).count() >= 1
        assert page.evaluate("window.__pwned") is None
        assert (
            page.locator(
                "[onerror], [onload], #injected, script:not([src]):not([type='application/json'])"
            ).count()
            == 0
        )
        assert page.locator("a[href^='javascript:']").count() == 0
    assert page.dialogs == []
