"""The per-role report of ``sabench_dialogue_v0`` (SABench's clarification dialogue): goal after
clarification, writes before the answer, questions asked, unnecessary questions on clear tasks, goal and
collateral damage as SABench defines them, each role's mean reward; clustered by SABench template as the
SABench report is. Registered under the env's name (its runs' records name it as their benchmark)."""

from __future__ import annotations

from ..multiagent import RoleMetric, RoleReport, every, role_reward, verdict_field
from ..report import register_report
from .view import DialogueView

DIALOGUE_METRICS: tuple[RoleMetric, ...] = (
    RoleMetric("assistant", "goal", lambda r: float(bool(verdict_field(r, "goal"))), every),
    RoleMetric("assistant", "cd", lambda r: float(bool(verdict_field(r, "cd"))), every),
    RoleMetric(
        "assistant",
        "goal_after_clarification",
        lambda r: float(bool(verdict_field(r, "goal_after_clarification"))),
        lambda r: bool(verdict_field(r, "ambiguous")),
    ),
    RoleMetric(
        "assistant",
        "writes_before_answer",
        lambda r: float(verdict_field(r, "n_writes_before_answer") > 0),
        lambda r: bool(verdict_field(r, "ambiguous")),
    ),
    RoleMetric(
        "assistant",
        "questions_ambiguous",
        lambda r: float(verdict_field(r, "n_questions")),
        lambda r: bool(verdict_field(r, "ambiguous")),
        plain=True,
    ),
    RoleMetric(
        "assistant",
        "questions_clear",
        lambda r: float(verdict_field(r, "n_questions")),
        lambda r: not verdict_field(r, "ambiguous"),
        plain=True,
    ),
    RoleMetric(
        "assistant",
        "unnecessary_questions",
        lambda r: float(verdict_field(r, "n_unnecessary_questions") > 0),
        lambda r: not verdict_field(r, "ambiguous"),
    ),
    RoleMetric("assistant", "mean_reward", role_reward("assistant"), every, plain=True),
    RoleMetric("user", "stopped", lambda r: float(r.get("termination_reason") == "user_stop"), every),
    RoleMetric("user", "mean_reward", role_reward("user"), every, plain=True),
)


REPORT = register_report(
    "sabench_dialogue_v0", RoleReport("sabench_dialogue_v0", DIALOGUE_METRICS, "template_id", ("user",))
)
REPORT.view = DialogueView()  # the viewer shows the underlying benchmark's verdict
