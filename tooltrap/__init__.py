"""tooltrap: Gymnasium environments where a tool-using LLM agent is rewarded for doing what the user
asked and nothing more.

``import tooltrap`` registers every env id with gymnasium::

    import gymnasium as gym
    import tooltrap

    gym.register_envs(tooltrap)
    env = gym.make("SABench-Calendar-v0")

``gym.make("tooltrap:SABench-Calendar-v0")`` works without the import.
"""

from __future__ import annotations

from tooltrap.envs.packages import ENV_IDS, check_env_id, env_spec, register_envs

from ._registration import benchmark_report

__version__ = "0.1.0"

register_envs()

__all__ = ["ENV_IDS", "__version__", "benchmark_report", "check_env_id", "env_spec", "register_envs"]
