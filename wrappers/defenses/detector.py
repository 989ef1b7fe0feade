"""A heuristic prompt-injection detector: a score ``s`` over a text from the manipulation signals it
shows (instruction overrides, fake system or role markers, delimiter escapes, fake earlier turns,
authority claims, jailbreak personas). Deterministic, no model.

``injection_score(text) >= 1`` is the trust gate's threshold (theta = 1). Strong signals weigh 1, weak
ones 0.5. Three weak signals name what a payload asks for in words genuine emergency text uses too
("stand by", "all residents", "act as a": the public disaster messages show each of them,
``scripts/benchmarks/sentry/false_alarms.py``): alone, any number of them counts as one weak signal, so
a clean report reaches theta only with a signal that steers the reader (a strong one, an authority
claim, an override order, a rules bypass, a "well done, now ..." pivot). :func:`detector_report`
measures precision and recall on labelled rows (the real injection and benign rows of the public
corpora), which bound what a gate built on it can stop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: (signal name, weight, pattern): strong signals weigh 1, weak ones 0.5
SIGNALS: tuple[tuple[str, float, re.Pattern[str]], ...] = tuple(
    (name, weight, re.compile(pattern, flags))
    for name, weight, pattern, flags in (
        (
            "override",
            1.0,
            r"\b(ignore|disregard|forget|skip|drop|discard)\b.{0,40}\b(previous|prior|above|earlier|all|your|any)\b.{0,30}\b(instructions?|rules?|prompts?|directions?|guidelines?|orders?|tasks?|context)\b",
            re.I | re.S,
        ),
        (
            "forget_everything",
            1.0,
            # "leave" and "remove" take only an earlier-context object: "we had to leave everything" is a
            # survivor's report (a real disaster message)
            r"\b(forget|ignore|disregard|discard)\b.{0,30}\b(everything|all (the )?previous|all (that|this)|what (you|we) (were told|discussed))\b"
            r"|\b(leave|remove)\b.{0,30}\b(all (the )?previous|what (you|we) (were told|discussed))\b",
            re.I | re.S,
        ),
        (
            "new_instructions",
            1.0,
            r"\b(new|updated|revised|real|further)\s+(instructions?|orders?|tasks?|directives?)\b\s*(:|-|follow)|\bnow (new |further )?(instructions|tasks) (follow|are followed)\b",
            re.I,
        ),
        (
            "persona_switch",
            1.0,
            r"\b(from now on,? you|pretend (to be|you are)|roleplay as|developer mode|jailbreak(ed)?|do anything now)\b",
            re.I,
        ),
        # "where you are now" is everyday speech: a new identity is what gives the switch away
        (
            "new_identity",
            1.0,
            r"\b[Yy]ou are now (a|an|the|my|going to|free|no longer)\b|\b[Nn]ow you are [A-Z]",
            0,
        ),
        ("dan", 1.0, r"\bDAN\b", 0),
        (
            "fake_system",
            1.0,
            r"(\[|<|\{)\s*(system|admin|developer|root)\s*(message|prompt|override|note)?\s*(\]|>|\})|^\s*system\s*:|\bsystem (message|override|prompt|notice)\s*:",
            re.I | re.M,
        ),
        ("delimiter_escape", 1.0, r"(#{3,}|={3,}|-{5,}|\"\"\"|```)\s*(end|stop|new|begin|system)\b", re.I),
        (
            "fake_history",
            1.0,
            r"(^|\n)\s*(assistant|ai|user|human)\s*:\s*\S.*\n\s*(assistant|ai|user|human)\s*:",
            re.I,
        ),
        (
            "prompt_leak",
            1.0,
            r"\b(reveal|print|show|repeat|output)\b.{0,30}\b(system prompt|your (instructions|prompt|rules))\b|\b(written|said) (at the beginning of|above in) (this|the) prompt\b",
            re.I,
        ),
        ("act_as", 0.5, r"\b(act as|acting as) (a|an|my|the)\b", re.I),
        (
            "authority",
            0.5,
            r"\b(this is|message from|order from|on behalf of)\s+(the\s+)?(chief|commander|director|supervisor|police chief|fire chief|mayor|administrator|management)\b",
            re.I,
        ),
        (
            "stand_down",
            0.5,
            r"\b(do not|don't|never)\s+(dispatch|alert|escalate)\b|\bstand (down|by)\b",
            re.I,
        ),
        (
            "urgency_override",
            0.5,
            r"\b(urgent|immediate|priority)\s+(override|instruction|directive|order)\b",
            re.I,
        ),
        (
            "bypass",
            0.5,
            r"\b(bypass|override|disable|circumvent)\b.{0,30}\b(rules?|polic(y|ies)|filters?|safeguards?|restrictions?|checks?|protocols?)\b",
            re.I | re.S,
        ),
        (
            "pivot",
            0.5,
            r"\b(very good|well done|excellent|great job|that is enough)\b.{0,60}\bnow\b|\bdespite what you('ve| have) been told\b",
            re.I | re.S,
        ),
        (
            "exfiltrate",
            0.5,
            r"\b(all|every|entire|whole)\b.{0,25}\b(records?|residents?|citizens?|database|registry|addresses)\b",
            re.I | re.S,
        ),
    )
)
THRESHOLD = 1.0
#: weak signals that genuine emergency text shows too: they count in full only beside a signal that
#: steers the reader; alone, together they weigh as one weak signal (above 0, so an over-broad record
#: query still goes to a human, and below theta)
EVERYDAY = frozenset({"stand_down", "exfiltrate", "act_as"})
_WEIGHTS = {name: weight for name, weight, _ in SIGNALS}


def signals(text: str) -> list[str]:
    """The names of the signals ``text`` shows."""
    return [name for name, _, pattern in SIGNALS if pattern.search(text)]


def combined_score(names: Iterable[str]) -> float:
    """The score of a text showing the signals ``names``: the sum of their weights, except that the
    :data:`EVERYDAY` ones weigh as one weak signal when no other signal is shown."""
    steering = everyday = 0.0
    for name in set(names):
        if name in EVERYDAY:
            everyday += _WEIGHTS[name]
        else:
            steering += _WEIGHTS[name]
    if not steering:
        everyday = min(everyday, max(_WEIGHTS[name] for name in EVERYDAY))
    return steering + everyday


def injection_score(text: str) -> float:
    """The score of ``text`` (0 for clean text, :func:`combined_score` of its :func:`signals`)."""
    return combined_score(signals(text))


@dataclass(frozen=True)
class DetectorReport:
    """Precision and recall of ``score >= threshold`` on labelled rows."""

    n_injection: int
    n_benign: int
    true_positives: int
    false_positives: int
    threshold: float

    @property
    def recall(self) -> float:
        return self.true_positives / self.n_injection if self.n_injection else float("nan")

    @property
    def precision(self) -> float:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else float("nan")

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.n_benign if self.n_benign else float("nan")


def detector_report(rows: Iterable[tuple[str, bool]], threshold: float = THRESHOLD) -> DetectorReport:
    """Precision / recall over ``(text, is_injection)`` pairs."""
    n_inj = n_ben = tp = fp = 0
    for text, is_injection in rows:
        hit = injection_score(text) >= threshold
        if is_injection:
            n_inj += 1
            tp += hit
        else:
            n_ben += 1
            fp += hit
    return DetectorReport(n_inj, n_ben, tp, fp, threshold)
