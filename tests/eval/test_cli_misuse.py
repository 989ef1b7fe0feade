"""Every user mistake on the command line is one line, ``error: ...``, with exit status 2, and writes
nothing: no traceback, whatever the mistake (argparse's own included)."""

from __future__ import annotations

from tooltrap.cli import main

CAL = "SABench-Calendar-v0"
ONE = ["--tasks", "cal-cascade-dependent-cancel-occurrence-01", "--quiet", "--resamples", "20"]


def _cases(tmp) -> list[tuple[list[str], str]]:
    """(argv, what the one line must say)."""
    (tmp / "a-file").write_text("x")
    report = tmp / "report"
    report.mkdir()
    (report / "report.json").write_text("{}")
    (report / "metrics.csv").write_text("run\n")
    out = ["--out", str(tmp / "new")]
    return [
        (["eval", CAL, "--out", str(tmp / "a-file"), *ONE], "is a file, not a folder"),
        (["eval", CAL, "--out", str(report), *ONE], "holds a report (report.json, metrics.csv)"),
        (["eval", CAL, "--agent", "hf:/nonexistent", *out, *ONE], "hf:/nonexistent: no checkpoint folder"),
        (["eval", CAL, "--harness", "react", *out, *ONE], "--harness react prompts a model in text"),
        (["eval", "EpiSEM-Finance-v0", "--agent", "careful", "--variant", "safe", *out], "KEY=VALUE"),
        (["eval", CAL, "--variants", str(tmp / "no.json"), *out, *ONE], "No such file"),
        (["eval", CAL, "--agent-arg", "bogus=1", *out, *ONE], "act-first has no option 'bogus'"),
        (["eval", CAL, "--agent", "random", "--agent-arg", "sed=1", *out, *ONE], "Did you mean 'seed'?"),
        (["eval", CAL, "--agent", "openai:m", "--agent-arg", "timeout=abc", *out, *ONE], "timeout='abc'"),
        (["eval", CAL, "--base-url", "http://127.0.0.1:1/v1", *out, *ONE], "--base-url is the server of"),
        (["eval", CAL, "--env-arg", "max_step=3", *out, *ONE], "Did you mean 'max_steps'?"),
        (["eval", CAL, "--env-arg", "oops", *out, *ONE], "--env-arg takes KEY=VALUE"),
        (["eval", "SentryBench-v0", "--env-arg", "tasks=/nonexistent", *out], "tasks"),
        (["eval", CAL, "--concurrency", "0", *out, *ONE], "--concurrency: must be at least 1"),
        (["eval", CAL, "--resamples", "0", *out], "--resamples: must be at least 1"),
        (["eval", CAL, "--seed", "x", *out], "invalid int value: 'x'"),
        (["eval", CAL], "the following arguments are required: --out"),
        (["eval", "EpiSEM-v0", "--protocol", "sbm", "--variant", "world=safe", *out], "--protocol chooses"),
        (["eval", "SABench-Calendr-v0", *out], "Did you mean 'SABench-Calendar-v0'"),
        (["eval", CAL, "--agent", "gld", *out, *ONE], "Did you mean 'gold'"),
        (["eval", CAL, "--defense", "previw", *out, *ONE], "Unknown defense 'previw'"),
        (["report", str(tmp / "nothing"), "--out", str(tmp / "r")], "no episodes.jsonl records"),
        (["report", str(tmp / "nothing"), "--out", str(tmp / "a-file")], "is a file, not a folder"),
        (["report", str(tmp / "nothing"), "--names", "a,b"], "--names has 2 names for 1 runs"),
        (["report", str(tmp / "nothing"), "--allow-module", "no_such_module_x"], "--allow-module"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ]


def test_every_usage_error_is_one_line_with_status_2(tmp_path, capsys):
    for argv, said in _cases(tmp_path):
        status = _status(argv)
        err = capsys.readouterr().err
        assert status == 2, (argv, err)
        assert err.startswith("error: ") and err.count("\n") == 1, (argv, err)  # one line, no traceback
        assert said in err, (argv, err)
        assert not (tmp_path / "new").exists(), argv  # nothing was written


def _status(argv: list[str]) -> int:
    """The exit status of ``tooltrap ARGV`` (argparse's own errors exit by SystemExit)."""
    try:
        return main(argv)
    except SystemExit as done:
        return int(done.code or 0)
