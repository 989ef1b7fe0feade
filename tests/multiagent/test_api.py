"""PettingZoo's own checks pass for the dialogue: ``parallel_api_test``, ``api_test`` on the AEC form,
and both seed tests."""

from __future__ import annotations

from typing import Any

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from pettingzoo.utils.conversions import parallel_to_aec

from tooltrap.envs.core import UnknownOptionError
from tooltrap.envs.multiagent import ENVS, make, sabench_dialogue_v0
from tooltrap.envs.multiagent.sabench.dialogue import SABenchDialogueEnv

#: a small pool keeps the random episodes short and varied (clear and ambiguous tasks)
POOL = {"templates": ["cal-ambiguity-independent-two-matches", "cal-cascade-dependent-cancel-occurrence"]}


class ProbedDialogue(SABenchDialogueEnv):
    """The env as the API tests drive it: both tests probe ``reset``'s signature with the junk option
    ``{"options": 1}``, which the env refuses with a typed error like any unknown option (tested
    below); this subclass drops exactly that probe and changes nothing else."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return super().reset(seed=seed, options=None if options == {"options": 1} else options)


def test_parallel_api_test_passes():
    parallel_api_test(ProbedDialogue(**POOL), num_cycles=200)


# recommendations for numeric games that a text dialogue cannot follow (Box/Discrete spaces, NumPy
# observations, agents named like "player_0")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:.*space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named")
def test_aec_api_test_passes():
    api_test(parallel_to_aec(ProbedDialogue(**POOL)), num_cycles=200)


def test_seed_tests_pass():
    parallel_seed_test(lambda: sabench_dialogue_v0.parallel_env(**POOL), num_cycles=100)
    seed_test(lambda: sabench_dialogue_v0.env(**POOL), num_cycles=100)


def test_unknown_reset_options_are_typed_errors():
    env = sabench_dialogue_v0.parallel_env(**POOL)
    with pytest.raises(UnknownOptionError, match="intended"):
        env.reset(options={"options": 1})


def test_factories_and_the_registry():
    assert set(ENVS) == {"sabench_dialogue_v0"}
    par = make("sabench_dialogue_v0", ambiguous=True)
    assert isinstance(par, SABenchDialogueEnv) and par.possible_agents == ["assistant", "user"]
    aec = make("sabench_dialogue_v0", aec=True, ambiguous=True)
    aec.reset(seed=0)
    assert aec.agent_selection == "assistant"
    assert par.observation_space("user") is par.observation_space("user")
    with pytest.raises(Exception, match="(?i)did you mean"):
        make("sabench_dialog_v0")
