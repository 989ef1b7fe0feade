"""Defenses (mitigations) as gymnasium wrappers, registered by name (see :mod:`.base` to write one).

Registered here, each the mitigation a benchmark's paper defines (its module cites the paper;
``tooltrap list`` shows every registered defense):

* ``confirm-prompt``: the prompt-level confirmation policy.
* ``confirm-gate``: a tool-enforced confirmation gate: every write waits for a simulated user who sees
  the call as stated (tool and arguments), not its side effects.
* ``preview``: structured write preview: a write returns exactly what would change (entities, fields,
  who is notified, external reach) and commits only when the identical call is sent again.
* ``preview-gate``: the gate's simulated user sees the structured preview before deciding.
* ``caution``: a prompt-only preamble: do not act when in doubt, escalate.
* ``tgcc``: the trust gate: tool output marked untrusted, a heuristic injection detector, consequential
  calls routed to a human on a manipulation signal or an over-broad record query.
* ``interceptor``: the hallucination interceptor: tool errors, failure words and
  numbers seen in no observation turn an answer into an abstention; operating points ``early``,
  ``output-only``, ``tuned``, ``packaged``.
"""

from __future__ import annotations

from . import confirmation
from .base import DEFENSES, Defense, DefenseEntry, add_defense, apply_defense, register_defense
from .confirmation import ConfirmationGate, ConfirmationPrompt, SimulatedPrincipal, confirmation_policy
from .interceptor import OPERATING_POINTS, Interceptor
from .preview import WritePreview
from .trust_gate import Caution, TGCCGatePolicy, TrustGate

add_defense(
    "preview-gate",
    ConfirmationGate,
    description="Confirmation gate whose simulated user sees the structured write preview before deciding.",
    benchmarks=confirmation.BENCHMARKS,
    user_sees_preview=True,
)

#: the older name of the registry (``tooltrap eval --mitigation``)
MITIGATIONS = DEFENSES
apply_mitigation = apply_defense

__all__ = [
    "DEFENSES",
    "MITIGATIONS",
    "Caution",
    "ConfirmationGate",
    "Interceptor",
    "OPERATING_POINTS",
    "ConfirmationPrompt",
    "Defense",
    "DefenseEntry",
    "SimulatedPrincipal",
    "TGCCGatePolicy",
    "TrustGate",
    "WritePreview",
    "add_defense",
    "apply_defense",
    "apply_mitigation",
    "confirmation_policy",
    "register_defense",
]
