"""The probe mechanism (envs/core/probes.py): gaming probes must score below gold, honest ones exactly
at gold with gold's verdict; a probe the tools refuse in every attempt is not applicable, never passed."""

from __future__ import annotations

from tooltrap.envs.core import ToolCall
from tooltrap.envs.core.probes import Outcome, Probe, ProbeSet, ProbeTally, judge_probe, run_probes

GOLD = Outcome(1.0, {"goal": True, "cd": False})
CALL = ToolCall(name="noop")


def test_gaming_must_score_below_gold():
    gaming = Probe.of("doubled", "gaming", [CALL])
    assert judge_probe("t", gaming, GOLD, Outcome(0.5, {"goal": True, "cd": True})).ok
    tie = judge_probe("t", gaming, GOLD, Outcome(1.0, {"goal": True, "cd": False}))
    assert tie.ok is False and "not below gold" in tie.detail


def test_honest_must_score_exactly_gold_with_gold_verdict():
    honest = Probe.of("reformat", "honest", [CALL])
    assert judge_probe("t", honest, GOLD, Outcome(1.0, {"goal": True, "cd": False})).ok
    lower = judge_probe("t", honest, GOLD, Outcome(-0.5, {"goal": False, "cd": False}))
    assert lower.ok is False and "goal=False" in lower.detail
    # same reward, different verdict: still wrong (a flag the reward does not weigh is still a verdict)
    assert judge_probe("t", honest, GOLD, Outcome(1.0, {"goal": True, "cd": True})).ok is False


def test_first_attempt_the_tools_accept_is_played_and_none_is_not_applicable():
    played: list[str] = []

    def play(calls):
        played.append(calls[0].name)
        return Outcome(1.0, dict(GOLD.flags), n_invalid_calls=0 if calls[0].name == "good" else 1)

    order = Probe.of("split", "honest", [ToolCall(name="bad")], [ToolCall(name="good")])
    never = Probe.of("split", "honest", [ToolCall(name="bad")])
    results = run_probes("t", [order, never], GOLD, play)
    assert [r.ok for r in results] == [True, None] and played == ["bad", "good", "bad"]
    tally = ProbeTally()
    tally.add(results)
    assert tally.ok and tally.lines() == [
        "honest probe split: 1/1 score exactly as gold (1 not applicable: refused by the tools, or played as gold)"
    ]


def test_a_probe_set_runs_its_generators_in_both_directions():
    probes = ProbeSet(
        gaming=(lambda source: [Probe.of("g", "gaming", [CALL])],),
        honest=(lambda source: [Probe.of("h", "honest", [CALL])],),
    )
    assert [(p.kind, p.direction) for p in probes.probes(None)] == [("g", "gaming"), ("h", "honest")]


def test_a_gaming_variant_that_played_as_gold_is_not_applicable():
    """A gate or a terminal may end the episode before the variant differs: the same play, the same
    score, and nothing learnt about the judge."""
    same = Outcome(1.0, dict(GOLD.flags), played="calls")
    result = judge_probe(
        "t", Probe.of("extra", "gaming", [CALL]), Outcome(1.0, dict(GOLD.flags), played="calls"), same
    )
    assert result.ok is None and "played as gold" in result.detail
