"""PettingZoo's own checks pass for the dialogue: ``parallel_api_test``, ``api_test`` on the AEC form,
and both seed tests."""

from __future__ import annotations

from typing import Any

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from pettingzoo.utils.conversions import parallel_to_aec
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from tests.multiagent.conftest import RESPOND, call
from tooltrap.envs.core import AnyText, UnknownOptionError
from tooltrap.envs.multiagent import ENVS, make, sabench_dialogue_v0
from tooltrap.envs.multiagent.base import STOP_TOKEN, TurnBasedAEC
from tooltrap.envs.multiagent.sabench.dialogue import SABenchDialogueEnv

#: a small pool keeps the random episodes short and varied (clear and ambiguous tasks)
POOL = {"templates": ["cal-ambiguity-independent-two-matches", "cal-cascade-dependent-cancel-occurrence"]}


class Choices(AnyText):
    """A Text space whose samples are drawn (with the space's seeded RNG) from a list of texts: random
    play that asks, answers, stops and errs, so the API tests go through every kind of turn."""

    def __init__(self, max_length: int, choices: list[str]):
        super().__init__(max_length)
        self.choices = choices

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return self.choices[int(self.np_random.integers(len(self.choices)))]


ASSISTANT_TEXTS = [
    call("clarify", question="Which one do you mean?"),
    call("calendar_list_events"),
    call("calendar_update_event", event_id="evt_101", start="17:00", end="17:30"),
    RESPOND,
    "not json",
]
USER_TEXTS = [
    "The Marketing one.",
    "The Engineering one.",
    "Whatever.",
    "Go ahead.",
    "Use calendar_update_event.",
    STOP_TOKEN,
    "",
]


class ChattyDialogue(SABenchDialogueEnv):
    """The dialogue with action spaces that sample plausible turns (the env itself is unchanged)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._action_spaces = {
            "assistant": Choices(self._action_spaces["assistant"].max_length, ASSISTANT_TEXTS),
            "user": Choices(self._action_spaces["user"].max_length, USER_TEXTS),
        }


class ProbedDialogue(SABenchDialogueEnv):
    """The env as the API tests drive it: both tests probe ``reset``'s signature with the junk option
    ``{"options": 1}``, which the env refuses with a typed error like any unknown option (tested
    below); this subclass drops exactly that probe and changes nothing else."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return super().reset(seed=seed, options=None if options == {"options": 1} else options)


class ProbedChattyDialogue(ChattyDialogue, ProbedDialogue):
    pass


def test_parallel_api_test_passes():
    parallel_api_test(ProbedDialogue(**POOL), num_cycles=200)
    parallel_api_test(ProbedChattyDialogue(**POOL), num_cycles=200)


# recommendations for numeric games that a text dialogue cannot follow (Box/Discrete spaces, NumPy
# observations, agents named like "player_0")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:.*space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named")
def test_aec_api_test_passes():
    api_test(OrderEnforcingWrapper(TurnBasedAEC(ProbedDialogue(**POOL))), num_cycles=200)
    api_test(OrderEnforcingWrapper(TurnBasedAEC(ProbedChattyDialogue(**POOL))), num_cycles=200)
    # PettingZoo's own conversion of the parallel env passes too
    api_test(parallel_to_aec(ProbedChattyDialogue(**POOL)), num_cycles=200)


def test_seed_tests_pass():
    parallel_seed_test(lambda: sabench_dialogue_v0.parallel_env(**POOL), num_cycles=100)
    seed_test(lambda: sabench_dialogue_v0.env(**POOL), num_cycles=100)
    parallel_seed_test(lambda: ChattyDialogue(**POOL), num_cycles=100)
    seed_test(lambda: OrderEnforcingWrapper(TurnBasedAEC(ChattyDialogue(**POOL))), num_cycles=100)


def test_random_play_goes_through_every_kind_of_end():
    env = ChattyDialogue(**POOL)
    reasons = set()
    for seed in range(60):
        env.reset(seed=seed)
        for space in env._action_spaces.values():
            space.seed(seed)
        while env.agents:
            turn = env.log.turn
            _, _, _, _, infos = env.step({turn: env.action_space(turn).sample()})
        reasons.add(infos["assistant"]["termination_reason"])
    assert {"assistant_stop", "user_stop", "simulator_error"} <= reasons


def test_the_aec_form_asks_the_agent_whose_turn_it_is():
    aec = sabench_dialogue_v0.env(templates="cal-ambiguity-independent-two-matches")
    aec.reset(options={"task_id": "cal-ambiguity-independent-two-matches-01"})
    target = aec.unwrapped.env.episode_variant["intended"]
    script = {
        "assistant": [call("clarify", question="Which one?"), RESPOND],
        "user": ["The Marketing one." if target == "events/evt_102" else "The Engineering one."],
    }
    order = []
    for agent in aec.agent_iter():
        _, reward, terminated, truncated, info = aec.last()
        if terminated or truncated:
            order.append((agent, reward, info["termination_reason"]))
            aec.step(None)
            continue
        order.append(agent)
        aec.step(script[agent].pop(0))
    assert order[:3] == ["assistant", "user", "assistant"]
    assert {a for a, *_ in order[3:]} == {"assistant", "user"}
    assert all(reason == "assistant_stop" for *_, reason in order[3:])


def test_unknown_reset_options_are_typed_errors():
    env = sabench_dialogue_v0.parallel_env(**POOL)
    with pytest.raises(UnknownOptionError, match="intended"):
        env.reset(options={"options": 1})


def test_factories_and_the_registry():
    assert set(ENVS) == {"sabench_dialogue_v0", "sentry_arena_v0"}
    par = make("sabench_dialogue_v0", ambiguous=True)
    assert isinstance(par, SABenchDialogueEnv) and par.possible_agents == ["assistant", "user"]
    aec = make("sabench_dialogue_v0", aec=True, ambiguous=True)
    aec.reset(seed=0)
    assert aec.agent_selection == "assistant"
    assert par.observation_space("user") is par.observation_space("user")
    with pytest.raises(Exception, match="(?i)did you mean"):
        make("sabench_dialog_v0")
