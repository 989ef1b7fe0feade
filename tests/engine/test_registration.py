from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest

import tooltrap


def test_every_id_registered():
    for env_id in tooltrap.ENV_IDS:
        assert env_id in gym.registry


def test_register_envs_is_idempotent():
    tooltrap.register_envs()
    gym.register_envs(tooltrap)
    assert "SABench-Calendar-v0" in gym.registry


def test_unknown_id_gets_did_you_mean():
    with pytest.raises(gym.error.NameNotFound, match="Did you mean: `SABench-Calendar`"):
        gym.make("SABench-Calander-v0")


def test_module_prefixed_id_works_without_import():
    code = "import gymnasium as gym; env = gym.make('tooltrap:SABench-Calendar-v0'); print(env.reset(seed=0)[1]['task_id'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("cal-")


def test_core_imports_without_torch():
    code = (
        "import sys, tooltrap, gymnasium as gym; gym.make('SABench-Calendar-v0');"
        "import tooltrap.agents, tooltrap.wrappers.eval.sabench.metrics;"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_top_level_packages_installed(tmp_path):
    """From outside the repo, the folders are importable only under the tooltrap namespace."""
    code = (
        "import importlib.util, pathlib, tooltrap, tooltrap.envs;"
        "root = pathlib.Path(tooltrap.__file__).resolve().parents[1];"
        "assert pathlib.Path(tooltrap.envs.__file__).resolve().parent == root / 'envs';"
        "specs = [importlib.util.find_spec(n) for n in ('envs', 'agents', 'wrappers', 'training')];"
        "assert not [s for s in specs if s and str(s.origin).startswith(str(root))], specs"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
