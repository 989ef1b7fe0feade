"""SABench evaluation: the paper's metrics and report."""
