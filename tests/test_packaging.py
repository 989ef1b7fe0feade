"""A built wheel installs into a fresh venv and works from outside the repository."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_installs_into_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheels = list(dist.glob("tooltrap-*.whl"))
    assert len(wheels) == 1
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "tooltrap/envs/sabench/data/calendar.json" in names
    # the viewer's templates and static files are package data
    view = "tooltrap/wrappers/eval/view/"
    assert {f"{view}templates/episode.html.j2", f"{view}static/table.js", f"{view}static/view.css"} <= set(
        names
    )
    assert "LICENSE" in " ".join(names)
    assert not [n for n in names if n.split("/")[0] in ("envs", "agents", "wrappers", "training")]
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheels[0])], check=True, capture_output=True
    )
    code = (
        "import gymnasium as gym, importlib.util, tooltrap;"
        "env = gym.make('SABench-Calendar-v0'); obs, info = env.reset(seed=0);"
        "assert 'calendar_cancel_event' in {t['function']['name'] for t in info['tools']};"
        "assert importlib.util.find_spec('envs') is None;"
        "assert 'site-packages' in tooltrap.envs.__file__;"
        "print(len(env.unwrapped.tasks))"
    )
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert int(out.stdout) >= 1
    cli = subprocess.run(
        [str(env_dir / "bin" / "tooltrap"), "eval", "SABench-Calendar-v0", "--agent", "gold", "--out", str(tmp_path / "run"), "--quiet", "--resamples", "200"],
        check=True, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert "goal" in cli.stdout
    # without the view extra (Jinja2), tooltrap view says which extra to install, in one line
    viewed = subprocess.run(
        [str(env_dir / "bin" / "tooltrap"), "view", str(tmp_path / "run"), "--out", str(tmp_path / "site")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert viewed.returncode == 2 and "tooltrap[view]" in viewed.stderr and viewed.stderr.count("\n") == 1


def test_every_package_folder_is_listed_in_pyproject():
    """The package-dir mapping needs an explicit package list: a folder missing from it is silently
    left out of wheels."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapping = config["package-dir"]
    found = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *rel.parts]) if rel.parts else package)
    assert found == listed, {"missing": sorted(found - listed), "stale": sorted(listed - found)}
