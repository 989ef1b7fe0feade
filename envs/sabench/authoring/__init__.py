"""SABench authoring: the templates that generate the packaged corpus."""
