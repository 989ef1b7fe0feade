"""Wrappers over tooltrap envs: action parsers, defenses, recorders and eval/ (metrics, reports)."""
