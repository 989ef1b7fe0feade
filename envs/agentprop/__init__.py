"""AgentProp-Bench: error propagation from a corrupted first tool call, fabricated tool use, and the
interceptor (seed 003_ec3875cd178b8635; spec: ../shared/spec/agentprop.md). Work in progress (issue 13):
the simulators, the injection rules and the tasks; the envs, stage metrics, fabrication and the
interceptor come next (the release reproduction is in ``tooltrap.wrappers.eval.agentprop.release``)."""

from .authoring.generate import generate
from .injection import INJECTION_TYPES, Injection, inject
from .judge import check_answer
from .task import AgentPropTask, Fact, packaged_tasks
from .tools.simulators import BACKENDS, RELEASE_TOOLS

__all__ = [
    "BACKENDS",
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
