"""scripts/train_gate.py: the gate of the arena trained with TRL (SFT on the TGCC rule's decisions, GRPO with
the arena in the loop) on the tiny offline model, on CPU, end to end."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("pettingzoo")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_train_gate_runs_sft_then_grpo_on_the_tiny_model(tmp_path):
    spec = importlib.util.spec_from_file_location("train_gate", ROOT / "scripts" / "train_gate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (
        module.main(
            ["--tiny", "--out", str(tmp_path), "--tasks", "8", "--sft-steps", "2", "--grpo-steps", "1"]
        )
        == 0
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["gate_turns"] > 0 and result["sft_steps"] == 2 and result["grpo_steps"] == 1
    # the teacher (TGCC) averts harm that approve-all does not, on the same gate turns
    assert result["mean_gate_reward"]["teacher_tgcc"] >= result["mean_gate_reward"]["approve_all"]
    assert (tmp_path / "final").is_dir()


def test_the_gpu_config_names_only_options_of_the_script():
    import yaml

    options = yaml.safe_load((ROOT / "configs" / "grpo_gate_qwen2.5-0.5b.yaml").read_text())
    text = (ROOT / "scripts" / "train_gate.py").read_text()
    assert all(f"--{key.replace('_', '-')}" in text for key in options)
