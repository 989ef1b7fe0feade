"""Text spaces that accept JSON.

``gymnasium.spaces.Text`` defaults to an alphanumeric charset, so ``contains`` rejects any JSON action.
:class:`AnyText` samples printable text but contains *any* ``str`` up to ``max_length``.
"""

from __future__ import annotations

import string
from typing import Any

from gymnasium import spaces


class AnyText(spaces.Text):
    """A Text space whose ``contains`` accepts any string within ``max_length``."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None):
        super().__init__(max_length=max_length, min_length=min_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"AnyText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, AnyText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )
