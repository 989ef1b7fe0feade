"""SentryBench arena: the attacker, the gate and the assistant as agents (``sentry_arena_v0``)."""
