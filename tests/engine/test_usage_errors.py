"""Every misuse of a reset option or an env kwarg, in every env id of the four benchmarks, is a typed
error (a ``TooltrapError``) that names the option (and the value given, for an unknown name), with a
did-you-mean for a misspelt option: never a bare ``TypeError`` from Python or from deep inside."""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import tooltrap
from tooltrap.envs.core import (
    TASK_SELECTORS,
    OptionTypeError,
    TooltrapError,
    UnknownOptionError,
    VariantError,
)

ENV_IDS = list(tooltrap.ENV_IDS)
#: values no option or kwarg takes (each has a type none of them accepts)
WRONG_TYPES: list[Any] = [object(), {"x": {"y": 1}}, [[1, 2]], b"bytes", float("nan")]
UNKNOWN = "zzz-no-such-value"
#: how a message says what an option accepts (a type, the known values, the allowed literals)
ACCEPTED_WORDS = ("takes", "Known values", "is not one of", "Valid keys", "Atoms:")


@cache
def env(env_id: str) -> Any:
    return gym.make(env_id).unwrapped


@cache
def options(env_id: str) -> tuple[str, ...]:
    """The reset options of an env id: the task selectors, its tasks' label keys, its variant keys."""
    e = env(env_id)
    labels = sorted({k for t in e.tasks for k in t.label_dict()})
    return (*TASK_SELECTORS, *labels, *e.benchmark.variant_model.model_fields)


def kwargs(env_id: str) -> tuple[str, ...]:
    """The constructor kwargs of an env id's class."""
    cls = type(env(env_id))
    return tuple(p for p in inspect.signature(cls.__init__).parameters if p != "self")


OPTION_CASES = [(e, o) for e in ENV_IDS for o in options(e)]
KWARG_CASES = [(e, k) for e in ENV_IDS for k in kwargs(e)]


def _names(err: BaseException, name: str, value: Any) -> bool:
    text = str(err)
    return name in text or (isinstance(value, str) and value in text)


def test_every_benchmark_and_env_id_is_covered():
    assert {e.split("-")[0] for e in ENV_IDS} == {"SABench", "EpiSEM", "SentryBench", "AgentProp"}
    assert len(OPTION_CASES) >= 4 * len(ENV_IDS) and len(KWARG_CASES) >= 6 * len(ENV_IDS)


@pytest.mark.parametrize(("env_id", "option"), OPTION_CASES)
def test_reset_options_of_a_wrong_type_or_unknown_name_are_typed_errors(env_id: str, option: str):
    e = env(env_id)
    for value in [*WRONG_TYPES, UNKNOWN]:
        with pytest.raises(TooltrapError) as err:
            e.reset(options={option: value})
        assert _names(err.value, option, value), (option, value, str(err.value))
        if not isinstance(value, str):  # a wrong value names the option itself, and what it accepts
            text = str(err.value)
            assert option in text and any(w in text for w in ACCEPTED_WORDS), text
    e.reset(seed=0)  # the env is still usable after every refused reset


@pytest.mark.parametrize(("env_id", "option"), OPTION_CASES)
def test_a_misspelt_reset_option_suggests_it(env_id: str, option: str):
    with pytest.raises(UnknownOptionError) as err:
        env(env_id).reset(options={option[:-1]: None})
    assert f"'{option}'" in str(err.value).partition("Did you mean")[2], str(err.value)


def _make(env_id: str, kwarg: str, value: Any) -> Any:
    """``gym.make(env_id, kwarg=value)``; ``render_mode`` goes to the class directly with the id's
    registered kwargs (gymnasium reads ``gym.make(render_mode=...)`` itself, as a str, before the env)."""
    if kwarg != "render_mode":
        return gym.make(env_id, **{kwarg: value})
    spec = gym.spec(env_id)
    return type(env(env_id))(**spec.kwargs, render_mode=value)


@pytest.mark.parametrize(("env_id", "kwarg"), KWARG_CASES)
def test_env_kwargs_of_a_wrong_type_or_unknown_name_are_typed_errors(env_id: str, kwarg: str):
    for value in [*WRONG_TYPES, UNKNOWN]:
        with pytest.raises(TooltrapError) as err:
            _make(env_id, kwarg, value)
        assert _names(err.value, kwarg, value), (kwarg, value, str(err.value))
        assert not isinstance(err.value, TypeError)  # gymnasium rebuilds a TypeError with one string


@pytest.mark.parametrize(("env_id", "kwarg"), KWARG_CASES)
def test_a_misspelt_env_kwarg_suggests_it(env_id: str, kwarg: str):
    with pytest.raises(UnknownOptionError) as err:
        gym.make(env_id, **{kwarg[:-1]: None})
    assert f"'{kwarg}'" in str(err.value).partition("Did you mean")[2], str(err.value)


@pytest.mark.parametrize("env_id", ["SABench-v0", "EpiSEM-v0", "SentryBench-v0", "AgentProp-v0"])
def test_the_reported_misuses(env_id: str):
    """The misuses the issue reports: task_id as a list or a dict, templates as an int, a file path
    where task objects are expected, a seed of the wrong type."""
    e = env(env_id)
    for value in (["a", "b"], {"id": 1}):
        with pytest.raises(OptionTypeError, match="reset option 'task_id' takes one task id"):
            e.reset(options={"task_id": value})
    with pytest.raises(OptionTypeError, match="'templates' takes a template id or a non-empty list"):
        e.reset(options={"templates": 3})
    with pytest.raises(OptionTypeError, match="'seed' takes a whole number >= 0"):
        e.reset(seed=-1)
    with pytest.raises(OptionTypeError, match="'seed'"):
        e.reset(seed="1")  # type: ignore[arg-type]
    _, info = e.reset(seed=np.int64(3))  # numpy integers are fine
    assert info["task_id"] in e.tasks.ids
    first = e.tasks[0]
    with pytest.raises(TooltrapError, match="task_id .*Did you mean"):
        e.reset(options={"task_id": first.id + "x"})


def test_a_path_where_tasks_are_expected_points_to_tasks_file(tmp_path):
    for env_id in ("SentryBench-v0", "EpiSEM-v0"):
        with pytest.raises(OptionTypeError, match=r"To load a file, pass tasks_file="):
            gym.make(env_id, tasks=str(tmp_path / "scenarios.json"))


def test_a_missing_task_file_is_named_for_every_benchmark(tmp_path):
    missing = tmp_path / "missing.json"
    for env_id, kwarg in (
        ("SABench-v0", "tasks_file"),
        ("EpiSEM-v0", "tasks_file"),
        ("EpiSEM-v0", "corpus"),
        ("SentryBench-v0", "tasks_file"),
        ("AgentProp-v0", "tasks_file"),
    ):
        with pytest.raises(TooltrapError, match="missing.json"):
            gym.make(env_id, **{kwarg: str(missing)})


def test_label_values_and_variants_are_checked_with_what_they_take():
    sabench = env("SABench-v0")
    with pytest.raises(TooltrapError, match="Did you mean 'cascade'"):
        sabench.reset(options={"trap_family": "cascad"})
    with pytest.raises(OptionTypeError, match="label value"):
        sabench.reset(options={"trap_family": []})
    assert sabench.reset(options={"trap_family": ["cascade", "overreach"]})[1]["task_id"]
    episem = env("EpiSEM-v0")
    with pytest.raises(VariantError, match=r"mask takes a list of str or None, got int 5"):
        episem.reset(options={"mask": 5, "condition": "suppressed"})
    with pytest.raises(VariantError, match="Did you mean 'safe'"):
        episem.reset(options={"world": "saf"})
