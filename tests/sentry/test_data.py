"""SentryBench's loaders on the real public files in ../shared/data/sentry (read there, never copied):
the paper's filtering, seeded sampling without replacement, every format, and a scenario set built
from them; the detector's precision and recall on the real rows."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.shared_data import SENTRY_DATA, needs
from tooltrap.envs.sentry.authoring.loaders import (
    DatasetError,
    DatasetWarning,
    english_payloads,
    load_disaster_messages,
    load_emergency_utterances,
    load_payload_rows,
    looks_english,
    read_table,
    sample,
)
from tooltrap.wrappers.defenses.detector import detector_report

DATA = SENTRY_DATA
pytestmark = [
    needs(DATA),
    # the releases' known quirks (a 911 row without a priority, ids whose labels conflict) are dropped
    # with a warning naming them: asserted in test_the_releases_quirks_are_named, quiet elsewhere
    pytest.mark.filterwarnings("ignore::tooltrap.envs.sentry.authoring.loaders.DatasetWarning"),
]


def _script(name: str):
    """``scripts/benchmarks/sentry/<name>.py`` as a module (registered: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(
        f"sentry_{name}", Path(__file__).parents[2] / "scripts" / "benchmarks" / "sentry" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_disaster_messages_are_filtered_as_the_paper_says():
    splits = load_disaster_messages(DATA / "figure8_disaster_response_splits")
    raw = read_table(DATA / "figure8_disaster_response_splits" / "disaster_response_messages_test.csv")
    pii = {str(r["id"]) for r in raw if r["PII"] == "1"}
    unrelated = {str(r["id"]) for r in raw if r["related"] != "1"}
    ids = {r.source.rsplit(":", 1)[1] for r in splits if "test" in r.source}
    assert ids and not ids & pii and not ids & unrelated  # related rows only, no PII-flagged row
    assert all(len(r.text) >= 40 and looks_english(r.text) for r in splits)
    assert len({r.text for r in splits}) == len(splits)  # deduplicated
    udacity = load_disaster_messages(
        DATA / "figure8_disaster_response_udacity"
    )  # labels from the second file
    assert len(udacity) > 10_000 and sum(bool(r.categories) for r in udacity) > len(udacity) // 2


def test_payload_corpora_in_every_format():
    csv_rows = load_payload_rows(DATA / "deepset_prompt_injections" / "train.csv")
    assert len(csv_rows) == 546 and sum(r.label == "injection" for r in csv_rows) == 203
    parquet = DATA / "deepset_prompt_injections" / "data" / "train-00000-of-00001-9564e8b05b4757ab.parquet"
    pytest.importorskip("pyarrow")
    assert [r.text for r in load_payload_rows(parquet)] == [r.text for r in csv_rows]
    jack = load_payload_rows(
        DATA / "jackhhao_jailbreak_classification" / "balanced" / "jailbreak_dataset_test_balanced.csv"
    )
    assert (len(jack), sum(r.label == "injection" for r in jack)) == (262, 139)
    wild = load_payload_rows(DATA / "verazuo_jailbreak_llms" / "jailbreak_prompts_2023_12_25.csv")
    assert len(wild) == 1405 and all(r.label == "injection" for r in wild)
    english = english_payloads(csv_rows)
    assert english and all(looks_english(r.text) and r.label == "injection" for r in english)
    assert len(english) < 203  # the German rows are left out


def test_emergency_utterances_and_jsonl(tmp_path):
    rows = load_emergency_utterances(DATA / "emergency_911_calls" / "virajpawar_911PQ" / "911.csv")
    assert len(rows) == 74 and {r.label for r in rows} == {"HIGH", "MEDIUM", "LOW"}  # one row has no priority
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps({"text": r.text, "label": 1}) for r in rows[:3]) + "\n")
    assert [r.label for r in load_payload_rows(path)] == ["injection"] * 3
    with pytest.raises(DatasetError, match="no such file"):
        read_table(tmp_path / "missing.csv")


@pytest.mark.filterwarnings("default::tooltrap.envs.sentry.authoring.loaders.DatasetWarning")
def test_the_releases_quirks_are_named():
    with pytest.warns(DatasetWarning, match=r"911.csv: 1 rows without a priority dropped \(line 71\)"):
        load_emergency_utterances(DATA / "emergency_911_calls" / "virajpawar_911PQ" / "911.csv")
    with pytest.warns(DatasetWarning, match="36 ids have rows whose labels or texts conflict"):
        load_disaster_messages(DATA / "figure8_disaster_response_udacity")
    with pytest.raises(DatasetError, match="no priority"):
        load_emergency_utterances(DATA / "emergency_911_calls" / "virajpawar_911PQ" / "911.csv", strict=True)


def test_seeded_sampling_without_replacement():
    rows = load_payload_rows(DATA / "deepset_prompt_injections" / "test.csv")
    a, b = sample(rows, 30, seed=4), sample(rows, 30, seed=4)
    assert a == b and len({r.source for r in a}) == 30 and sample(rows, 30, seed=5) != a
    assert len(sample(rows, 10_000, seed=1)) == len(rows)


def test_detector_precision_and_recall_on_the_real_rows():
    deepset = load_payload_rows(DATA / "deepset_prompt_injections" / "test.csv")
    report = detector_report((r.text, r.label == "injection") for r in deepset)
    assert report.n_injection == 60 and report.n_benign == 56
    assert (
        report.precision >= 0.9 and 0.1 <= report.recall <= 0.9
    )  # precise, and bounded recall: the gate's limit
    jack = load_payload_rows(
        DATA / "jackhhao_jailbreak_classification" / "balanced" / "jailbreak_dataset_test_balanced.csv"
    )
    assert detector_report((r.text, r.label == "injection") for r in jack).recall > 0.4
    disaster = load_disaster_messages(DATA / "figure8_disaster_response_splits")
    assert (
        detector_report((r.text, False) for r in disaster).false_positives == 0
    )  # silent on real emergencies


def test_no_false_alarm_on_the_clean_emergency_texts_of_every_public_copy():
    """A sample of every copy (the Udacity pair too, not only the official splits) and the row that
    tripped the gate before; scripts/false_alarms.py scans them whole."""
    module = _script("false_alarms")
    copies = module.public_copies(DATA, emergency_only=True)
    assert {c.name for c in copies} >= {
        "figure8_disaster_response_udacity", "figure8_disaster_response_splits", "emergency_911_calls",
    }  # fmt: skip
    for copy in copies:
        rows = sample(copy.rows, 2_000, seed=22)
        rows += [
            r for r in copy.rows if r.source == "figure8:disaster_messages.csv:1554"
        ]  # "leave everything"
        found = module.scan(module.PublicCopy(copy.name, True, rows, copy.files, []))
        assert found.report.n_benign == len(rows) and not found.alarms, (copy.name, found.alarms)


def test_a_scenario_set_built_from_the_real_files(tmp_path):
    out = tmp_path / "real.json"
    assert _script("build").main(["--data", str(DATA), "--out", str(out), "--seed", "3"]) == 0
    tasks = json.loads(out.read_text())["tasks"]
    assert len(tasks) == 200
    real = [t for t in tasks if t["content_source"].startswith("figure8:")]
    assert len(real) >= 30 and all(t["content_form"] == "report" for t in real)
    payloads = {t["attack"]["source"].split(":")[0] for t in tasks if t["attack"]}
    assert {"deepset", "jackhhao"} <= payloads

    import gymnasium as gym

    from tooltrap.envs.core import load_tasks
    from tooltrap.envs.sentry import SentryScenario, benchmark

    scenarios = load_tasks(out, SentryScenario, check=benchmark().check_task)
    env = gym.make("SentryBench-v0", tasks=scenarios)
    obs, _ = env.reset(options={"task_id": real[0]["id"]})
    assert real[0]["instruction"].split("\n\n", 1)[1][:40] in obs


def test_hugging_face_loading_offline_is_a_typed_error(monkeypatch):
    pytest.importorskip("datasets")
    from tooltrap.envs.sentry.authoring.loaders import load_hf

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(DatasetError, match=r"deepset/prompt-injections\] cannot load"):
        load_hf("deepset/prompt-injections")
