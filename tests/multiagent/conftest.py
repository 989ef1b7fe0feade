"""Shared pieces of the multi-agent tests: PettingZoo (skipped without the ``multiagent`` extra), the
Text-space patch of its ``api_test``, and helpers to play hand-built dialogues."""

from __future__ import annotations

import importlib
import json
from typing import Any

import gymnasium
import pytest

pytest.importorskip("pettingzoo")

# PettingZoo 1.27's api_test compares observation dtypes, and a str has none: check Text observations
# by type instead. The module, not the function that pettingzoo.test re-exports under the same name.
_api = importlib.import_module("pettingzoo.test.api_test")
_original = _api._test_observation_space_compatibility


def _text_compatible(expected: Any, seen: Any, recursed_keys: Any) -> Any:
    if isinstance(expected, gymnasium.spaces.Text):
        assert isinstance(seen, str), f"observation at {recursed_keys} should be str, got {type(seen)}"
        return None
    return _original(expected, seen, recursed_keys)


_api._test_observation_space_compatibility = _text_compatible


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


RESPOND = call("respond", message="Done.")
