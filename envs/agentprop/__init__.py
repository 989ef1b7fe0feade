"""AgentProp-Bench: error propagation from a corrupted first tool call, fabricated tool use, and the
interceptor (seed 003_ec3875cd178b8635; spec: ../shared/spec/agentprop.md). Rooms: ``benchmark.py``
(the plug-in, the injection variant and hooks, the env), ``task.py`` (the task model, the simulators'
world, the gold outputs, the packaged tasks), ``tools/`` (the simulators), ``injection.py`` (the
release's injection rules), ``judge.py`` (verdict, answer checker, grounding, fabrication),
``reward.py``, ``selfcheck.py`` and ``authoring/`` (the task generator). The release reproduction is in
``tooltrap.wrappers.eval.agentprop.release``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltrap.envs.packages import lazy_exports

#: env id -> the keyword arguments of the env class (``tooltrap.envs.packages`` registers them)
ENV_IDS: dict[str, dict[str, str]] = {
    "AgentProp-v0": {"domain": "core"},
    "AgentProp-Weather-v0": {"domain": "weather"},
    "AgentProp-Calendar-v0": {"domain": "calendar"},
    "AgentProp-Medical-v0": {"domain": "medical"},
    "AgentProp-Knowledge-v0": {"domain": "knowledge"},
    "AgentProp-Retail-v0": {"domain": "retail"},
}
#: the env class, imported by gymnasium on the first ``gym.make``
ENTRY_POINT = "tooltrap.envs.agentprop.benchmark:AgentPropEnv"

#: public name -> the room that defines it (imported on first use, so that ``import tooltrap`` stays cheap)
_EXPORTS = {
    "generate": ".authoring.generate",
    "INJECTION_TYPES": ".injection",
    "Injection": ".injection",
    "inject": ".injection",
    "check_answer": ".judge",
    "AgentPropTask": ".task",
    "Fact": ".task",
    "packaged_tasks": ".task",
    "BACKENDS": ".tools.simulators",
    "RELEASE_TOOLS": ".tools.simulators",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from .authoring.generate import generate
    from .injection import INJECTION_TYPES, Injection, inject
    from .judge import check_answer
    from .task import AgentPropTask, Fact, packaged_tasks
    from .tools.simulators import BACKENDS, RELEASE_TOOLS

__all__ = [
    "BACKENDS",
    "ENTRY_POINT",
    "ENV_IDS",
    "INJECTION_TYPES",
    "RELEASE_TOOLS",
    "AgentPropTask",
    "Fact",
    "Injection",
    "check_answer",
    "generate",
    "inject",
    "packaged_tasks",
]
