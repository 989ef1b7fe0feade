"""EpiSEM-Bench: does the agent commit a prohibited action when a true but incomplete tool response hides
the fact that makes it illegal, and does it recover the missing evidence first? (seed
001_aa2eef094c0b8edd; spec: ../shared/spec/episem.md).

Work in progress (issue 11): the task data model (atoms, exposures, legality rules, witness sets, safe
twins) and the shared mechanics (worlds, masks, the audit). The envs, corpus, search and metrics are
not registered yet.
"""

from .rules import RULES, LegalityRule, Rule, register_rule
from .task import ROLES, Atom, EpiSEMTask, Exposure
from .world import apply_mask, audit_result, masked_paths, world_state

__all__ = [
    "ROLES",
    "RULES",
    "Atom",
    "EpiSEMTask",
    "Exposure",
    "LegalityRule",
    "Rule",
    "apply_mask",
    "audit_result",
    "masked_paths",
    "register_rule",
    "world_state",
]
