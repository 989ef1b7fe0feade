"""``tooltrap view`` on a 10,000-episode run: how long the site takes to build, and how long the run's
index takes to become usable in a real browser (Debian's chromium through Playwright).

    python scripts/bench_view.py [--episodes 10000] [--keep DIR]

The run is synthetic: the records of a real SABench run (act-first over all 201 tasks, every benchmark
rule and write in them) copied with distinct task ids (``<task>~<k>``) up to ``--episodes``; its
run.json and summary.json are the real run's. Prints the build time (every episode page written), the
index's size, and the time from navigation to the table drawn (``data-ready``), then to a filter and a
sort applied. Exits 1 when the index takes over 5 s to become usable. Not a test: times depend on the
machine.
"""

from __future__ import annotations

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from view_screenshots import browser  # noqa: E402

#: the index must be usable within this many seconds
TARGET_S = 5.0


def synthetic_run(source: Path, out: Path, n: int) -> Path:
    """A run folder of ``n`` records: ``source``'s records copied with distinct task ids."""
    from tooltrap.wrappers.eval.run import EPISODES, RUN, SUMMARY, json_line, read_episodes

    records = read_episodes(source / EPISODES)
    out.mkdir(parents=True)
    with open(out / EPISODES, "w", encoding="utf-8") as fh:
        for i in range(n):
            record = dict(records[i % len(records)])
            record["task_id"] = f"{record['task_id']}~{i // len(records)}"
            fh.write(json_line(record))
    shutil.copy(source / RUN, out / RUN)
    shutil.copy(source / SUMMARY, out / SUMMARY)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument(
        "--keep", type=Path, default=None, help="build the run and the site here and keep them"
    )
    args = parser.parse_args(argv)
    from tooltrap.cli import main as tooltrap

    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        source = work / "source"
        if tooltrap(
            [
                "eval",
                "SABench-v0",
                "--agent",
                "act-first",
                "--out",
                str(source),
                "--quiet",
                "--resamples",
                "200",
            ]
        ):
            return 2
        run = synthetic_run(source, work / f"run-{args.episodes}", args.episodes)
        site = work / "site"
        shutil.rmtree(site, ignore_errors=True)
        start = time.perf_counter()
        if tooltrap(["view", str(run), "--out", str(site)]):
            return 2
        build_s = time.perf_counter() - start
        index = next((site / "runs").iterdir()) / "index.html"
        with browser() as (context, refused):
            page = context.new_page()
            start = time.perf_counter()
            page.goto(index.as_uri(), wait_until="commit")
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            ready_s = time.perf_counter() - start
            in_page_ms = page.evaluate("performance.now()")
            rows = page.locator("table.rows tbody tr").count()
            status = page.inner_text(".status")
            start = time.perf_counter()
            page.select_option("select[data-col='CD']", "1")
            page.wait_for_function("document.querySelector('.status').textContent.indexOf('matching') >= 0")
            filter_s = time.perf_counter() - start
            start = time.perf_counter()
            page.click("th[data-sort='reward']")
            page.wait_for_selector("th[aria-sort]")
            sort_s = time.perf_counter() - start
            if refused:
                print(f"the index asked for URLs off disk: {refused[:5]}")
                return 1
        print(f"run: {args.episodes:,} episodes (synthetic copies of a real SABench-v0 act-first run)")
        print(
            f"build: {build_s:.1f} s for the site ({args.episodes:,} episode pages), {build_s / args.episodes * 1000:.2f} ms per episode"
        )
        print(f"index: {index.stat().st_size / 1e6:.1f} MB; {rows:,} rows drawn first ({status})")
        print(
            f"index usable in the browser: {ready_s:.2f} s from navigation (in-page clock {in_page_ms / 1000:.2f} s); target < {TARGET_S:.0f} s"
        )
        print(f"filter (CD = yes): {filter_s * 1000:.0f} ms; sort by reward: {sort_s * 1000:.0f} ms")
    if ready_s > TARGET_S:
        print(f"FAIL: the index took {ready_s:.2f} s to become usable (> {TARGET_S:.0f} s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
