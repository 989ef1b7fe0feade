"""What every script's ``--help`` shares: the description is the first paragraph of the script's
docstring, whole (never its first line alone, which may stop mid-sentence)."""

from __future__ import annotations

import argparse
from typing import Any


def description(doc: str | None) -> str:
    """The first paragraph of ``doc``, its lines joined into one (argparse wraps it again)."""
    paragraph = (doc or "").strip().split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def script_parser(doc: str | None, **kwargs: Any) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` whose description is :func:`description` of ``doc``."""
    return argparse.ArgumentParser(description=description(doc), **kwargs)
