"""AgentProp evaluation: stage metrics, report, judges and the release reproduction."""
