"""Terminal actions: the episode ends at the first one."""

from __future__ import annotations

from tooltrap.envs.core import Backend, ToolCallError, tool

from .common import Text


class TerminalBackend(Backend):
    domain = "terminal"

    @tool("terminal", ends_as="answer")
    def respond(self, message: Text) -> dict:
        """Give the final answer to the user and end the task.

        Args:
            message: What you tell the user (what you did, or what you found).
        """
        if not message.strip():
            raise ToolCallError("The message is empty.", hint="Tell the user what you did.")
        return {"delivered": True}

    @tool("terminal", ends_as="clarify")
    def clarify(self, question: Text) -> dict:
        """Ask the user a clarifying question instead of acting, and end the turn.

        Args:
            question: The question to ask the user (for example which of several items they mean).
        """
        if not question.strip():
            raise ToolCallError("The question is empty.", hint="Ask a specific question.")
        return {"delivered": True}
