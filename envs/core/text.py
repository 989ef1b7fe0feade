"""Text from outside made safe once, at the boundary: what an agent sends the env (an action, its raw
model output) and what a model server sends an agent or a judge (a reply body) go through
:func:`make_safe` before anything stores, echoes or re-sends them.

Why: a Python ``str`` can hold a *lone surrogate* (a code point in U+D800..U+DFFF that is not half of a
pair). ``json.loads`` makes one from a ``"\\ud800"`` escape (and from the bytes ``ED A0 80``, which it
decodes with ``surrogatepass``), and a model or a fuzzer sends such escapes. UTF-8 cannot encode it:
``str.encode`` raises ``UnicodeEncodeError``, and so does an HTTP client building the next request's
JSON body, a log line or a file write. Stored once in the conversation, the trace or the state, it
breaks every later step. Lone surrogates are the only code points a ``str`` holds that UTF-8 refuses:
NUL, other control characters, noncharacters and private-use code points all encode (JSON escapes the
control characters), so they are kept exactly as sent.

The rule, deterministic and the same everywhere:

* each lone surrogate character is replaced by U+FFFD REPLACEMENT CHARACTER, one for one;
* with ``json_escapes=True`` (text that is or may be JSON and will be decoded: an action, a reply body,
  a tool call's ``arguments`` string), each ``\\uXXXX`` escape of a lone surrogate is replaced by the
  escape ``\\ufffd``, so the decoded value holds U+FFFD where the surrogate would have been. A valid
  pair (``\\ud83d\\ude00``, an emoji as ASCII-only encoders write it) and an escaped backslash
  (``\\\\ud800``: the six characters ``\\ud800`` as text) are left alone;
* bytes are decoded as UTF-8 (UTF-16/32 when the JSON encoding detection says so); an encoded
  surrogate is one lone surrogate (as ``json.loads`` reads it), and when other invalid byte sequences
  remain, each of them becomes U+FFFD.

U+FFFD rather than an escape spelled out as text (``\\ud800``): the replacement never turns back into a
surrogate when the text is decoded again (a tool call's arguments are JSON inside JSON), and it is the
character every UTF-8 decoder writes for what it cannot represent. What was replaced is not lost: the
count is returned, and the callers record it (``escaped`` on the trace step and in the step info, and
the trace's total), so a viewer can flag the step.
"""

from __future__ import annotations

import json
import re

__all__ = ["REPLACEMENT", "make_safe"]

#: what every unencodable code point becomes
REPLACEMENT = "\ufffd"
_REPLACEMENT_UTF8 = REPLACEMENT.encode("utf-8")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# every JSON escape, left to right, so that an escaped backslash ("\\\\") is consumed whole and the
# "ud800" after it stays text; group 1: a surrogate escape that is not half of a valid pair
_ESCAPE = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)",
    re.S,
)


def make_safe(text: str | bytes, *, json_escapes: bool = False) -> tuple[str, int]:
    """``text`` with every code point UTF-8 cannot encode replaced by U+FFFD, and how many were replaced.

    Args:
        text: A string, or bytes (decoded as UTF-8, or the UTF-16/32 that ``json`` detects).
        json_escapes: Also replace ``\\uXXXX`` escapes of lone surrogates by ``\\ufffd`` escapes: for
            text that will be decoded as JSON.

    Returns:
        ``(safe, n)``: ``safe.encode("utf-8")`` never raises, and neither does encoding anything
        ``json.loads(safe)`` returns (when ``json_escapes``); ``n`` counts the replacements (0: ``safe``
        is ``text``, or its decoding).
    """
    n = 0
    if isinstance(text, bytes | bytearray):
        data = bytes(text)
        encoding = json.detect_encoding(data)
        try:
            # surrogatepass: an encoded surrogate (ED A0 80) decodes as json.loads reads it, and becomes
            # one U+FFFD below, like any lone surrogate
            text = data.decode(encoding, "surrogatepass")
        except UnicodeDecodeError:
            text = data.decode(encoding, "replace")
            # the U+FFFD the decoder wrote, not those the sender sent
            sent = data.count(_REPLACEMENT_UTF8) if encoding == "utf-8" else 0
            n = text.count(REPLACEMENT) - sent
    if not text.isascii():  # isascii is O(1) on CPython: the common case costs nothing
        text, found = _LONE_SURROGATE.subn(REPLACEMENT, text)
        n += found
    if json_escapes and "\\u" in text:
        found = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal found
            if match.group(1) is None:
                return match.group(0)
            found += 1
            return "\\ufffd"

        replaced = _ESCAPE.sub(replace, text)
        if found:
            text, n = replaced, n + found
    return text, n
