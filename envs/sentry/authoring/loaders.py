"""Loaders for the public datasets SentryBench grounds its scenarios in, with the paper's filtering and
seeded sampling. They read files a user supplies (CSV, parquet, JSONL), or Hugging Face datasets when
the network allows (:func:`load_hf`); nothing is downloaded at import.

* Disaster messages (Figure Eight / Appen "Multilingual Disaster Response Messages", either the Udacity
  pair ``disaster_messages.csv`` + ``disaster_categories.csv`` or the official splits with a ``PII``
  column): rows that are ``related``, in English (the ``message`` column is the English translation; rows
  that are still mostly non-ASCII or name a foreign-language placeholder are dropped), at least
  ``min_chars`` long, not PII-flagged, deduplicated. Test input only: their license is unstated, so they
  are never bundled.
* Injection and jailbreak prompts (deepset/prompt-injections ``text,label``; jackhhao jailbreak
  classification ``prompt,type``; verazuo in-the-wild ``prompt,jailbreak``): rows with their label
  (injection / benign).
* Emergency utterances (911PQ: ``utterance,priority`` without a header).

:func:`sample` draws without replacement, seeded; payloads may be reused across scenarios (the corpus
builder cycles them).
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooltrap.envs.core import TooltrapError


class DatasetError(TooltrapError, ValueError):
    """A dataset file is missing, unreadable or not in a known format (names the file)."""


@dataclass(frozen=True)
class Row:
    """One text of a source dataset: ``label`` is ``injection`` / ``benign`` for payload corpora and
    ``emergency`` / the priority for emergency content; ``source`` is ``dataset:file:row``;
    ``categories`` the labels set on the row (disaster messages: ``fire``, ``floods`` ...)."""

    text: str
    label: str
    source: str
    categories: tuple[str, ...] = ()


def read_table(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a CSV (header required), JSONL or parquet file as dicts."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            try:
                import pyarrow.parquet as pq
            except ImportError:
                raise DatasetError(
                    f"{path}: reading parquet needs pyarrow (pip install pyarrow), or pass the CSV"
                ) from None
            return pq.read_table(path).to_pylist()
        if suffix in (".jsonl", ".json"):
            text = path.read_text(encoding="utf-8")
            if suffix == ".json":
                data = json.loads(text)
                return data if isinstance(data, list) else data.get("rows", [])
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        with path.open(encoding="utf-8-sig", newline="") as fh:
            return list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, DatasetError):
            raise
        raise DatasetError(f"{path}: cannot read ({exc})") from None


_WORD = re.compile(r"[A-Za-z]+")
_ENGLISH = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "have",
        "has",
        "we",
        "i",
        "you",
        "they",
        "it",
        "this",
        "that",
        "there",
        "here",
        "need",
        "needs",
        "please",
        "help",
        "no",
        "not",
        "our",
        "my",
        "your",
        "their",
        "from",
        "by",
        "water",
        "food",
        "people",
    ]
)


_OTHER = frozenset(
    [
        "der",
        "die",
        "das",
        "und",
        "ich",
        "nicht",
        "ist",
        "zu",
        "mit",
        "sich",
        "auf",
        "ein",
        "eine",
        "auch",
        "wie",
        "wir",
        "sie",
        "le",
        "la",
        "les",
        "et",
        "est",
        "des",
        "une",
        "que",
    ]
)
#: payload excerpts are shown to models and people: sexual content is left out (the corpora contain some)
_EXPLICIT = re.compile(r"\b(sex\w*|explicit|nsfw|porn\w*|nude|erotic|femboy|rape\w*|fetish\w*)\b", re.I)


def looks_english(text: str) -> bool:
    """A cheap check: mostly ASCII, common English words (at least two, and one word in eight), and
    hardly any common German or French ones."""
    if not text:
        return False
    ascii_share = sum(ch.isascii() for ch in text) / len(text)
    words = [w.lower() for w in _WORD.findall(text)]
    english = sum(w in _ENGLISH for w in words)
    other = sum(w in _OTHER for w in words)
    return ascii_share > 0.95 and english >= 2 and english * 8 >= len(words) and other < 2


def _flag(value: Any) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


def load_disaster_messages(path: str | Path, *, min_chars: int = 40) -> list[Row]:
    """Filtered disaster messages from a file or folder (see the module docstring)."""
    path = Path(path)
    files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
    rows: list[Row] = []
    seen: set[str] = set()
    for file in files:
        if file.name == "disaster_categories.csv":
            continue
        table = read_table(file)
        if not table or "message" not in table[0]:
            continue
        labels: dict[str, dict[str, int]] = {}
        if "related" not in table[0]:  # the Udacity pair keeps the labels in a second file
            categories = file.with_name("disaster_categories.csv")
            if not categories.exists():
                raise DatasetError(f"{file}: no 'related' column and no disaster_categories.csv beside it")
            for row in read_table(categories):
                pairs = dict(p.rsplit("-", 1) for p in row["categories"].split(";"))
                labels[row["id"]] = {k: _flag(v) for k, v in pairs.items()}
        for i, row in enumerate(table):
            text = " ".join(str(row.get("message") or "").split())
            flags = (
                labels.get(str(row.get("id")), {})
                if labels
                else {
                    k: _flag(v)
                    for k, v in row.items()
                    if k not in ("id", "split", "message", "original", "genre")
                }
            )
            if (
                flags.get("related") != 1
                or flags.get("PII")
                or len(text) < min_chars
                or not looks_english(text)
            ):
                continue
            if "NOTES:" in text or text in seen:
                continue
            seen.add(text)
            set_flags = tuple(sorted(k for k, v in flags.items() if v == 1 and k not in ("related", "PII")))
            rows.append(Row(text, "emergency", f"figure8:{file.name}:{row.get('id', i)}", set_flags))
    if not rows:
        raise DatasetError(f"{path}: no disaster message passed the filters")
    return rows


def load_payload_rows(path: str | Path) -> list[Row]:
    """Injection / jailbreak / benign prompts from a deepset, jackhhao or verazuo file."""
    path = Path(path)
    table = read_table(path)
    if not table:
        raise DatasetError(f"{path}: empty")
    columns = set(table[0])
    rows = []
    for i, row in enumerate(table):
        if {"text", "label"} <= columns:  # deepset
            text, label = row["text"], "injection" if _flag(row["label"]) == 1 else "benign"
            name = "deepset"
        elif {"prompt", "type"} <= columns:  # jackhhao
            text, label = row["prompt"], "injection" if str(row["type"]).strip() == "jailbreak" else "benign"
            name = "jackhhao"
        elif "prompt" in columns:  # verazuo
            flag = row.get("jailbreak")
            text = row["prompt"]
            label = "injection" if str(flag).strip().lower() in ("true", "1", "") else "benign"
            name = "verazuo"
        else:
            raise DatasetError(
                f"{path}: unknown columns {sorted(columns)} (expected text,label or prompt,type)"
            )
        text = str(text or "").strip()
        if text:
            rows.append(Row(text, label, f"{name}:{path.name}:{i}"))
    return rows


def load_emergency_utterances(path: str | Path) -> list[Row]:
    """911PQ-style ``utterance,priority`` rows (no header): label = the priority (HIGH/MEDIUM/LOW)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            table = list(csv.reader(fh))
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from None
    return [
        Row(r[0].strip(), r[1].strip().upper(), f"911pq:{path.name}:{i}")
        for i, r in enumerate(table)
        if len(r) >= 2 and r[0].strip()
    ]


def english_payloads(rows: Iterable[Row], *, min_chars: int = 30, max_chars: int = 600) -> list[Row]:
    """Injection rows in English within a length band (deepset mixes German in; long jailbreaks are
    cut at ``max_chars`` on a sentence end)."""
    out = []
    for row in rows:
        if row.label != "injection" or len(row.text) < min_chars or not looks_english(row.text):
            continue
        if _EXPLICIT.search(row.text):
            continue
        text = row.text
        if len(text) > max_chars:
            cut = max(text.rfind(". ", 0, max_chars), text.rfind("\n", 0, max_chars))
            text = text[: cut + 1 if cut > min_chars else max_chars].strip()
        out.append(Row(text, row.label, row.source))
    return out


def sample(rows: Sequence[Row], n: int, seed: int) -> list[Row]:
    """``n`` rows drawn without replacement with a seeded RNG (all of them, shuffled, if fewer)."""
    rng = random.Random(seed)
    pool = list(rows)
    rng.shuffle(pool)
    return pool[:n]


def load_hf(
    name: str, split: str = "train", text_column: str = "text", label_column: str | None = "label"
) -> list[Row]:
    """Rows of a Hugging Face dataset (needs ``datasets`` and the network, or a local cache)."""
    try:
        from datasets import load_dataset
    except ImportError:
        raise DatasetError("load_hf needs the datasets package (the train extra)") from None
    try:
        data = load_dataset(name, split=split)
    except Exception as exc:  # noqa: BLE001 - offline, unknown name: one typed error
        raise DatasetError(f"{name}: cannot load ({type(exc).__name__}: {exc})") from None
    rows = []
    for i, row in enumerate(data):
        label = str(row.get(label_column, "")) if label_column else ""
        rows.append(
            Row(
                str(row[text_column]),
                "injection" if label in ("1", "jailbreak", "True") else label,
                f"hf:{name}:{i}",
            )
        )
    return rows
