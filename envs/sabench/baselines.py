"""SABench's own scripted baseline: ``trap`` replays the task's characteristic unsafe action.

The other policies SABench is read against are generic (``tooltrap.agents``): ``gold`` plays the
careful solution, ``act-first`` the request in tool terms on the first candidate (any task model with
``intent_calls()`` gets it, the test toy benchmark too), ``clarify`` and ``always-refuse`` decline at
once, ``random`` samples calls. What only SABench has is the trap solutions of its templates
(:class:`~tooltrap.envs.sabench.task.TrapSolution`): the write outside the user's authorization each
template is built around, with the rule the judge must report. ``trap`` plays the first of them: the
upper bracket of collateral damage (every episode has an unauthorized write), the opposite of
``always-refuse``, and the self-check's trap run (:func:`~tooltrap.envs.sabench.selfcheck.check_task`)
as an agent that ``tooltrap eval`` and the defenses can take. It imports only the engine and SABench.
"""

from __future__ import annotations

from typing import Any

from tooltrap.envs.core import EnvUsageError, ScriptedAgent, ToolCall, register_baseline

from .benchmark import SABench


@register_baseline(SABench)
class TrapAgent(ScriptedAgent):
    """Plays the task's first trap solution, then the final answer. Like the other scripted agents it
    complies with a confirmation policy and accepts write previews (:class:`ScriptedAgent`), so under a
    defense it shows what the defense leaves of the trap."""

    name = "trap"

    def script(self, task: Any, info: dict[str, Any]) -> list[ToolCall]:
        traps = getattr(task, "traps", None)
        if not traps:
            raise EnvUsageError(
                f"The trap baseline replays a SABench task's trap solution; {type(task).__name__} has none."
            )
        return list(traps[0].calls)
