"""Defenses (mitigations) as gymnasium wrappers. One module per defense; ``MITIGATIONS`` names them
for ``tooltrap eval --mitigation``.

SABench's paper (section 8 / A.10) studies a confirmation policy and a structured write preview:

* ``confirm-prompt``: the prompt-level confirmation policy (the paper's version).
* ``confirm-gate``: a tool-enforced confirmation gate: every write waits for a simulated user who sees
  the call as stated (tool and arguments), not its side effects.
* ``preview``: structured write preview: a write returns exactly what would change (entities, fields,
  who is notified, external reach) and commits only when the identical call is sent again.
* ``preview-gate``: the gate's simulated user sees the structured preview before deciding.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym

from tooltrap.envs.core import UnknownNameError

from .confirmation import CONFIRMATION_POLICY, ConfirmationGate, ConfirmationPrompt
from .preview import WritePreview

MITIGATIONS: dict[str, Callable[[gym.Env], gym.Env]] = {
    "confirm-prompt": ConfirmationPrompt,
    "confirm-gate": ConfirmationGate,
    "preview": WritePreview,
    "preview-gate": lambda env: ConfirmationGate(env, user_sees_preview=True),
}


def apply_mitigation(env: gym.Env, name: str | None) -> gym.Env:
    """Wrap ``env`` with the named mitigation (``None`` or ``"none"``: unchanged)."""
    if name in (None, "", "none"):
        return env
    try:
        return MITIGATIONS[name](env)
    except KeyError:
        raise UnknownNameError("mitigation", name, MITIGATIONS) from None


__all__ = [
    "CONFIRMATION_POLICY",
    "MITIGATIONS",
    "ConfirmationGate",
    "ConfirmationPrompt",
    "WritePreview",
    "apply_mitigation",
]
