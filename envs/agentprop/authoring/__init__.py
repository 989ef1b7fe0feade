"""AgentProp-Bench authoring: the task generator (templates per domain and difficulty)."""

from .generate import COUNTS, TEMPLATES, generate, render_tasks

__all__ = ["COUNTS", "TEMPLATES", "generate", "render_tasks"]
