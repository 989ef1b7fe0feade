"""SABench's clarification dialogue (``sabench_dialogue_v0``): the derivation of what holds after the
user's answer (``clarified``), the user (``users``), the benchmark, judge and env (``dialogue``), the
scripted assistants (``baselines``) and the metrics (``metrics``)."""
