"""TRL training adapters (installed with the ``train`` extra)."""
