"""Evaluation: metrics as pure functions over arrays, template-clustered bootstrap, reports."""
