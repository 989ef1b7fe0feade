"""EpiSEM-Bench: does the agent commit a prohibited action when a true but incomplete tool response
hides the fact that makes it illegal, and does it recover the missing evidence first? (seed
001_aa2eef094c0b8edd; spec: ../shared/spec/episem.md; docs: docs/episem.md).

Families (``families/<domain>/*.json``) compile into twin-pair tasks (:class:`EpiSEMTask`); the env
plays one as a variant (world, condition, mask); the judge decides legality on the hidden true state.
"""

from .authoring.family import FamilySpec, compile_family, load_family
from .benchmark import (
    AUDIT_TOOL,
    EpiSEM,
    EpiSEMEnv,
    EvidenceMask,
    EvidenceVariant,
    benchmark,
    build_tasks,
    packaged_tasks,
)
from .judge import EpiSEMVerdict
from .reward import EpiSEMReward
from .rules import RULES, LegalityRule, Rule, minimal_witness_sets, register_rule
from .task import ROLES, Atom, EpiSEMTask, Exposure

ENV_IDS = {
    "EpiSEM-v0": "all",
    "EpiSEM-CloudOps-v0": "cloudops",
    "EpiSEM-Commerce-v0": "commerce",
    "EpiSEM-Communication-v0": "communication",
    "EpiSEM-DocumentAccess-v0": "document_access",
    "EpiSEM-Finance-v0": "finance",
    "EpiSEM-Travel-v0": "travel",
}

__all__ = [
    "AUDIT_TOOL",
    "ENV_IDS",
    "ROLES",
    "RULES",
    "Atom",
    "EpiSEM",
    "EpiSEMEnv",
    "EpiSEMReward",
    "EpiSEMTask",
    "EpiSEMVerdict",
    "EvidenceMask",
    "EvidenceVariant",
    "Exposure",
    "FamilySpec",
    "LegalityRule",
    "Rule",
    "benchmark",
    "build_tasks",
    "compile_family",
    "load_family",
    "minimal_witness_sets",
    "packaged_tasks",
    "register_rule",
]
