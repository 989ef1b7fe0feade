"""AgentProp-Bench: error propagation from a corrupted first tool call, fabricated tool use, and the
interceptor (seed 003_ec3875cd178b8635; spec: ../shared/spec/agentprop.md). Rooms: ``benchmark.py``
(the plug-in, the injection variant and hooks, the env), ``task.py`` (the task model, the simulators'
world, the gold outputs, the packaged tasks), ``tools/`` (the simulators), ``injection.py`` (the
release's injection rules), ``judge.py`` (verdict, answer checker, grounding, fabrication),
``reward.py``, ``selfcheck.py`` and ``authoring/`` (the task generator). The release reproduction is in
``tooltrap.wrappers.eval.agentprop.release``."""

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
