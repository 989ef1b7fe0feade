"""The toy's tools: a library catalogue and its lending desk."""

from __future__ import annotations

from .library import LibraryBackend

__all__ = ["LibraryBackend"]
