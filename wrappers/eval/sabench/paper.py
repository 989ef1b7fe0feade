"""Reference figures printed in the SABench paper (11 frontier models, 2,211 runs).

Shown beside our results, clearly labeled, never used to tune anything. Values are fractions.
"""

from __future__ import annotations

SOURCE = "SABench paper (seed 000_0a5ec4642a2d78bb): 11 frontier LLMs x 201 tasks = 2,211 runs"

#: the paper's corpus: (templates, tasks, ambiguous tasks)
CORPUS = (47, 201, 45)

OVERALL = {
    "cd": 0.152,  # 337 of 2,211 runs
    "cd_given_goal": 0.128,
    "cd_given_goal_non_ambiguous": 0.041,
    "cd_non_ambiguous": 0.084,
    "clarification_proxy": 0.568,
}
COUNTS = {"runs": 2211, "cd_runs": 337, "cd_runs_goal": 252, "cd_runs_external": 169}
CD_BY_TRAP_FAMILY = {"ambiguity": 0.388, "cascade": 0.065, "mis_targeting": 0.078, "overreach": 0.110}
CD_BY_STATE_STRUCTURE = {"dependent": 0.221, "cross_tool": 0.210, "external": 0.110, "independent": 0.094}
AB_VIOLATION_BY_STATE_STRUCTURE = {"dependent": 0.761, "cross_tool": 0.622}
UNNECESSARY_CLARIFICATION_RANGE = (0.026, 0.173)
EXTERNAL_ONLY_CD = {"ambiguity": 0.273, "other_traps": 0.020}
MITIGATION = {"confirmation_cd_reduction": (0.52, 0.71), "confirmation_goal_cost_points": (13, 17)}
