"""SentryBench evaluation: the paper's two-sided metrics and report."""
