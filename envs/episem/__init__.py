"""EpiSEM-Bench: does the agent commit a prohibited action when a true but incomplete tool response
hides the fact that makes it illegal, and does it recover the missing evidence first? (seed
001_aa2eef094c0b8edd; spec: ../shared/spec/episem.md; docs: docs/episem.md).

Families (``families/<domain>/*.json``) compile into twin-pair tasks (:class:`EpiSEMTask`); the env
plays one as a variant (world, condition, mask); the judge decides legality on the hidden true state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltrap.envs.packages import lazy_exports

#: env id -> the keyword arguments of the env class (``tooltrap.envs.packages`` registers them)
ENV_IDS: dict[str, dict[str, str]] = {
    "EpiSEM-v0": {"domain": "all"},
    "EpiSEM-CloudOps-v0": {"domain": "cloudops"},
    "EpiSEM-Commerce-v0": {"domain": "commerce"},
    "EpiSEM-Communication-v0": {"domain": "communication"},
    "EpiSEM-DocumentAccess-v0": {"domain": "document_access"},
    "EpiSEM-Finance-v0": {"domain": "finance"},
    "EpiSEM-Travel-v0": {"domain": "travel"},
}
#: the env class, imported by gymnasium on the first ``gym.make``
ENTRY_POINT = "tooltrap.envs.episem.benchmark:EpiSEMEnv"

#: public name -> the room that defines it (imported on first use, so that ``import tooltrap`` stays cheap)
_EXPORTS = {
    "FamilySpec": ".authoring.family",
    "compile_family": ".authoring.family",
    "load_family": ".authoring.family",
    "AUDIT_TOOL": ".benchmark",
    "EpiSEM": ".benchmark",
    "EpiSEMEnv": ".benchmark",
    "EvidenceMask": ".benchmark",
    "EvidenceVariant": ".benchmark",
    "benchmark": ".benchmark",
    "build_tasks": ".benchmark",
    "packaged_tasks": ".benchmark",
    "EpiSEMVerdict": ".judge",
    "EpiSEMReward": ".reward",
    "LegalityRule": ".rules",
    "RULES": ".rules",
    "Rule": ".rules",
    "minimal_witness_sets": ".rules",
    "register_rule": ".rules",
    "Atom": ".task",
    "EpiSEMTask": ".task",
    "Exposure": ".task",
    "ROLES": ".task",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
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

__all__ = [
    "AUDIT_TOOL",
    "ENTRY_POINT",
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
