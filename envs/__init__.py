"""tooltrap environments: the engine (core) and one package per benchmark."""
