"""Broken user files, one test per kind and benchmark (the cases of ``scripts/broken_files.py``): each is
rejected at load with a typed error naming the file, the row and the field (or, for the rows public
dataset releases really have, dropped with a warning naming them); none is accepted silently, crashes
at load or later at a step, or hangs; a valid 4,000-row file loads. Plus the details the table cannot
show: what the messages say, strict mode, the limits' edges."""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

import pytest

from tooltrap.envs.core import TaskValidationError, load_tasks

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "broken_files.py"


def _script():
    spec = importlib.util.spec_from_file_location("broken_files", SCRIPT)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


broken = _script()
CASES = broken.cases()


def test_every_target_has_the_common_kinds():
    kinds = {(c.kind, c.target) for c in CASES}
    for target in broken.TARGETS:
        for kind in ("empty file", "non-UTF-8", "invalid JSON", "NaN", "JSON scalar where rows are expected"):
            assert (kind, target) in kinds, (kind, target)
        assert ("4,000 rows (valid: must load, not hang)", target) in kinds
    assert len(CASES) >= 120


@pytest.mark.parametrize("case", CASES, ids=[f"{c.target}: {c.kind}" for c in CASES])
def test_a_broken_file_is_rejected_at_load_naming_file_row_and_field(case, tmp_path):
    # no wall-clock assertion: the deadline only turns a hang into a failure instead of a stuck run
    outcome = broken.run_case(case, tmp_path, timeout_s=600, max_load_s=600)
    assert outcome.ok, outcome.text


def test_the_script_prints_the_table_and_exits_zero(capsys):
    assert broken.main(["--only", "empty file"]) == 0
    out = capsys.readouterr().out
    assert "| kind | EpiSEM importer | SentryBench scenarios | SentryBench pools" in out
    assert "| empty file | rejected | rejected | rejected | rejected | rejected |" in out


def test_the_script_fails_on_a_file_accepted_silently(tmp_path):
    quiet = broken.Case(
        "a valid file", broken.AGENTPROP, broken.agentprop_case(lambda rows: None), expect="reject"
    )
    outcome = broken.run_case(quiet, tmp_path, timeout_s=600, max_load_s=600)
    assert not outcome.ok and "ACCEPTED SILENTLY" in outcome.text


# -- details --------------------------------------------------------------------------------------------
def test_importer_messages_name_the_row_by_id_and_line(tmp_path):
    from tooltrap.envs.episem.authoring.importer import import_corpus

    rows = broken.episem_rows()
    path = broken.write_jsonl(tmp_path / "c.jsonl", [*rows, {**rows[0], "user_goal": "Other."}])
    with pytest.raises(TaskValidationError) as err:
        import_corpus(path)
    assert err.value.task_id == "fx-pay-001 (line 3)" and err.value.field == "id"
    assert "line 1 has it too, with different content" in str(err.value)


def test_importer_limits_at_their_edges(tmp_path):
    from tooltrap.envs.episem.authoring.importer import MAX_EXPRESSION_DEPTH, import_corpus, parse_expression

    atoms = ["a", "b"]
    ok = "(" * MAX_EXPRESSION_DEPTH + "a > b" + ")" * MAX_EXPRESSION_DEPTH
    assert parse_expression(ok, atoms)["op"] == ">"
    with pytest.raises(ValueError, match="nested deeper than"):
        parse_expression("(" + ok + ")", atoms)
    with pytest.raises(ValueError, match="nested deeper than"):
        parse_expression("a in " + "[" * 40 + "]" * 40, atoms)
    rows = broken.episem_rows()
    rows[0]["evidence"][5]["exposures"][0]["path"] = "$.approvals[1000].status"  # the largest index taken
    tasks, _ = import_corpus(broken.write_jsonl(tmp_path / "c.jsonl", rows))
    assert tasks[0].atoms[5].exposures[0].path == "$.approvals[1000].status"


def test_imported_rows_sharing_a_tool_never_see_each_others_paths(tmp_path):
    """Two rows declaring one read tool with the same signature: each world's read shows its own row's
    paths only (the exposures travel in the row's world, not in a corpus-wide table)."""
    import gymnasium as gym

    import tooltrap  # noqa: F401

    rows = broken.episem_rows()
    second = json.loads(json.dumps(rows[0]).replace("INV-9", "INV-7").replace("AP-3", "AP-5"))
    second["id"] = "fx-pay-002"
    second["evidence"][1]["exposures"][0]["path"] = "$.total"  # the amount at another path
    env = gym.make("EpiSEM-v0", corpus=str(broken.write_jsonl(tmp_path / "c.jsonl", [rows[0], second])))
    env.reset(options={"task_id": "fx-pay-001"})
    first = json.loads(env.step('{"name": "get_invoice", "arguments": {"invoice_id": "INV-9"}}')[0])
    assert "amount" in first["result"] and "total" not in first["result"]
    env.reset(options={"task_id": "fx-pay-002"})
    other = json.loads(env.step('{"name": "get_invoice", "arguments": {"invoice_id": "INV-7"}}')[0])
    assert "total" in other["result"] and "amount" not in other["result"]


def test_dataset_quirks_warn_and_strict_mode_refuses_them(tmp_path):
    from tooltrap.envs.sentry.authoring.loaders import (
        DatasetError,
        DatasetWarning,
        load_emergency_utterances,
    )

    path = tmp_path / "911.csv"
    path.write_text(broken.utterances() + "My code is not compiling\n")
    with pytest.warns(DatasetWarning, match=r"911.csv: 1 rows without a priority dropped \(line 3\)"):
        assert len(load_emergency_utterances(path)) == 2
    with pytest.raises(DatasetError) as err:
        load_emergency_utterances(path, strict=True)
    assert (err.value.row, err.value.field) == ("line 3", "priority")


def test_a_csv_field_at_the_limit_loads_and_one_past_it_names_row_and_column(tmp_path):
    from tooltrap.envs.sentry.authoring.loaders import MAX_FIELD_CHARS, DatasetError, load_payload_rows

    path = tmp_path / "p.csv"
    path.write_text(broken.payload_csv([("Ignore that. " + "y" * (MAX_FIELD_CHARS - 13), "1")]))
    assert len(load_payload_rows(path)[0].text) == MAX_FIELD_CHARS
    path.write_text(broken.payload_csv([("ok then", "0"), ("y" * (MAX_FIELD_CHARS + 1), "1")]))
    with pytest.raises(DatasetError) as err:
        load_payload_rows(path)
    assert (err.value.row, err.value.field) == ("line 3", "text")
    import csv

    assert csv.field_size_limit() == 131_072  # the process-wide limit is left as it was


def test_task_file_limits_name_the_field(tmp_path):
    from tooltrap.envs.agentprop.benchmark import load_task_file

    rows = broken.agentprop_rows()
    rows[0]["labels"] = {"deep": broken.NESTED_500}
    path = broken.write_json(tmp_path / "t.json", rows)
    with pytest.raises(TaskValidationError) as err:
        load_task_file(path)
    assert err.value.field.startswith("labels.deep.0.0.0") and "levels)" in err.value.field
    assert "nested deeper than 64 levels" in str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a valid file loads without a warning
        assert len(load_task_file(broken.write_json(tmp_path / "ok.json", broken.agentprop_rows()))) == 3


def test_sabench_task_files_get_the_same_checks(tmp_path):
    """SABench's tasks_file goes through the same reader: NaN, non-UTF-8 and depth are refused there too."""
    from tooltrap.envs.sabench.benchmark import SABenchTask, packaged_tasks

    row = json.loads(packaged_tasks("calendar")[0].model_dump_json())
    path = tmp_path / "t.json"
    path.write_text(broken._nan_json([row], lambda rows: rows[0]["labels"], "weight", "NaN"))
    with pytest.raises(TaskValidationError, match="NaN"):
        load_tasks(path, SABenchTask)
    path.write_bytes(json.dumps([row]).encode() + b"\xff")
    with pytest.raises(TaskValidationError, match="not UTF-8 text: byte 0xff on line 1"):
        load_tasks(path, SABenchTask)
