"""SABench task templates: data plus small generators, one module per template."""
