"""Email-target templates."""
