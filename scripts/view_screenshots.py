"""Screenshots of ``tooltrap view`` for the docs: the index of a run and one failing episode per
benchmark (and per multi-agent env), and a comparison, taken in Debian's chromium with Playwright.

    python scripts/view_screenshots.py                 # writes docs/screenshots/*.png
    python scripts/view_screenshots.py --out DIR --work DIR2

The runs are deterministic (scripted agents, small task selections, seeded): the same pages every time.
``tests/eval/test_view.py`` runs this script into a temporary folder and checks the site it builds in a
real browser. Needs the ``view`` extra (Jinja2), ``playwright`` (pip) and ``/usr/bin/chromium`` (apt;
never ``playwright install``, which downloads a browser). Every request a page makes that is not a
``file://`` URL is refused and reported: the site must work offline.
"""

from __future__ import annotations

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
#: headless chromium on a closed network: no sandbox (containers), no GPU, nothing phoning home
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
QUICK = ("--quiet", "--resamples", "200")
#: run name -> (benchmark shown in the docs, ``tooltrap eval`` arguments)
RUNS: dict[str, tuple[str, list[str]]] = {
    "sabench": ("SABench", ["SABench-Calendar-v0", "--agent", "act-first", "--tasks", "cal-*-01"]),
    "sabench-gold": ("SABench", ["SABench-Calendar-v0", "--agent", "gold", "--tasks", "cal-*-01"]),
    "episem": (
        "EpiSEM",
        [
            "EpiSEM-Finance-v0",
            "--agent",
            "trusting",
            "--tasks",
            "fin-*-[12]",
            "--variant",
            "condition=suppressed",
        ],
    ),
    "sentry": ("SentryBench", ["SentryBench-v0", "--agent", "obedient", "--tasks", "*-00[1-3]"]),
    "agentprop": (
        "AgentProp",
        [
            "AgentProp-Weather-v0",
            *("--agent", "fabricating", "--tasks", "weather_000*"),
            *("--variant", "injection=semantic_wrong", "--variant", "injection=none"),
        ],
    ),
    "dialogue": (
        "sabench_dialogue_v0",
        ["sabench_dialogue_v0", "--agent", "assistant=act-first", "--tasks", "em-*-01"],
    ),
    "arena": (
        "sentry_arena_v0",
        ["sentry_arena_v0", "--agent", "assistant=obedient", "--tasks", "*-00[1-2]"],
    ),
}
#: the runs whose index and failing episode the docs show (the others serve the comparison)
SHOWN = ("sabench", "episem", "sentry", "agentprop", "dialogue", "arena")


def make_runs(root: Path) -> dict[str, Path]:
    """Every run of :data:`RUNS` under ``root`` (a rerun of a finished run does nothing)."""
    from tooltrap.cli import main

    made = {}
    for name, (_, argv) in RUNS.items():
        out = root / name
        if main(["eval", *argv, "--out", str(out), *QUICK]) != 0:
            raise SystemExit(f"tooltrap eval {' '.join(argv)} failed")
        made[name] = out
    return made


def build_site(runs: dict[str, Path], site: Path) -> None:
    """``tooltrap view`` over every run into ``site``."""
    from tooltrap.cli import main

    if main(["view", *map(str, runs.values()), "--out", str(site)]) != 0:
        raise SystemExit("tooltrap view failed")


def failing_episode(site: Path, run_folder: str) -> Path:
    """The first episode page of a run (in the run's order) whose verdict holds a finding of the judge."""
    for page in sorted((site / "runs" / run_folder / "e").glob("*.html")):
        if 'class="finding judge"' in page.read_text(encoding="utf-8"):
            return page
    raise SystemExit(f"no failing episode in {run_folder}")


@contextmanager
def browser() -> Iterator[tuple[Any, list[str]]]:
    """A headless chromium context (a fresh profile) that refuses and records every request that is not
    ``file://``: yields (context, refused URLs)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: apt-get install chromium (never playwright install)")
    refused: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=list(CHROMIUM_ARGS),
            viewport={"width": 1280, "height": 900},
            device_scale_factor=1,
        )
        context.route("**/*", route)
        try:
            yield context, refused
        finally:
            context.close()


def run_folders(site: Path) -> dict[str, str]:
    """Run name (:data:`RUNS`) -> its folder under ``site/runs`` (the site numbers runs in order)."""
    folders = sorted(p.name for p in (site / "runs").iterdir())
    return dict(zip(RUNS, folders, strict=True))


def screenshots(site: Path, out: Path, log: Callable[[str], None] = print) -> list[Path]:
    """The docs' screenshots of ``site`` into ``out``: per shown run its index and a failing episode,
    and the first comparison's index. Raises ``SystemExit`` if a page asked for anything off disk."""
    out.mkdir(parents=True, exist_ok=True)
    folders = run_folders(site)
    written = []
    with browser() as (context, refused):
        page = context.new_page()
        for name in SHOWN:
            page.goto((site / "runs" / folders[name] / "index.html").as_uri())
            page.wait_for_selector("body[data-ready='1']")
            path = out / f"{name}-index.png"
            page.screenshot(path=str(path))
            written.append(path)
            page.goto(failing_episode(site, folders[name]).as_uri())
            path = out / f"{name}-episode.png"
            height = min(page.evaluate("document.body.scrollHeight"), 2200)
            page.screenshot(
                path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": height}
            )
            written.append(path)
        compare = sorted((site / "compare").iterdir())[0]
        page.goto((compare / "index.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        path = out / "compare-index.png"
        page.screenshot(path=str(path))
        written.append(path)
        first = page.locator("table.rows tbody a").first
        first.click()
        page.wait_for_load_state()
        path = out / "compare-task.png"
        page.screenshot(path=str(path))
        written.append(path)
        if refused:
            raise SystemExit(f"the pages asked for {len(refused)} URL(s) off disk: {refused[:5]}")
    for path in written:
        log(f"wrote {path}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder for the PNGs")
    parser.add_argument(
        "--work", type=Path, default=None, help="folder for the runs and the site (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        runs = make_runs(work / "runs")
        site = work / "site"
        build_site(runs, site)
        screenshots(site, args.out)
        (args.out / "runs.json").write_text(
            json.dumps({name: argv for name, (_, argv) in RUNS.items()}, indent=1) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
