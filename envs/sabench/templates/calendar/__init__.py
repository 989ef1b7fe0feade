"""Calendar-target templates."""
