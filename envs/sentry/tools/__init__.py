"""SentryBench tools: the seeded public-safety sandbox (read and consequential tools)."""
