"""AgentProp tools: the deterministic simulators (the release's schemas plus search_knowledge)."""
