"""AgentProp-Bench: error propagation from a corrupted first tool call, fabricated tool use, and the
interceptor (seed 003_ec3875cd178b8635; spec: ../shared/spec/agentprop.md). Work in progress (issue 13):
the simulators and the injection rules; the tasks, envs, metrics and the reproduction come next."""

from .injection import INJECTION_TYPES, Injection, inject
from .simulators import BACKENDS, RELEASE_TOOLS

__all__ = ["BACKENDS", "INJECTION_TYPES", "RELEASE_TOOLS", "Injection", "inject"]
