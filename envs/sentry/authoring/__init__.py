"""SentryBench authoring: the scenario corpus builder and the public datasets' loaders."""
