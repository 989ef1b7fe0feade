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
import io
import random
import re
import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooltrap.envs.core import EnvUsageError, TaskValidationError, did_you_mean
from tooltrap.envs.core.usage import (
    DataLimitError,
    UnreadableFileError,
    check_json_value,
    describe,
    dotted,
    json_problem,
    loads_json,
    read_user_text,
)

#: the longest field a dataset row may hold (csv's own default limit): a longer one is refused, naming
#: its row and column, never a bare ``_csv.Error``
MAX_FIELD_CHARS = 131_072
#: ``csv.field_size_limit`` is process-wide: raised only while this module parses, under a lock (a
#: field over the limit is then found and named by its column, not reported as an unreadable file)
_CSV_LOCK = threading.Lock()


class DatasetError(TaskValidationError):
    """A dataset or corpus file is missing, unreadable or not in a known format. Names the file, the row
    (``line N`` of a text file, an id, or ``#i``) and the column or field where known (``file``,
    ``row``, ``field``; ``task_id`` is the row, as for a task file)."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        row: str | int | None = None,
        field: str | None = None,
    ):
        self.message = message
        self.file = str(file) if file is not None else None
        self.row = self.task_id = str(row) if row is not None else None
        self.field = field
        where = ", ".join(
            f"{k}={v}" for k, v in (("file", self.file), ("row", self.row), ("field", field)) if v is not None
        )
        ValueError.__init__(self, f"[{where}] {message}" if where else message)


class DatasetWarning(UserWarning):
    """Rows of a public release dropped for a known quirk of the release (a row without a label,
    duplicate ids whose labels conflict): named, never dropped silently. ``strict=True`` on a loader
    makes them errors."""


@dataclass(frozen=True)
class Row:
    """One text of a source dataset: ``label`` is ``injection`` / ``benign`` for payload corpora and
    ``emergency`` / the priority for emergency content; ``source`` is ``dataset:file:row``;
    ``categories`` the labels set on the row (disaster messages: ``fire``, ``floods`` ...)."""

    text: str
    label: str
    source: str
    categories: tuple[str, ...] = ()


def _text(path: Path) -> str:
    if not path.exists():
        raise DatasetError("no such file", file=path)
    try:
        return read_user_text(path)
    except UnreadableFileError as exc:
        raise DatasetError(exc.message, file=path, row=f"line {exc.line}" if exc.line else None) from None


def _csv_records(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """``(first line, fields)`` of every non-blank record of CSV text; a field over
    :data:`MAX_FIELD_CHARS` is refused by the caller, who knows the columns."""
    records: list[tuple[int, list[str]]] = []
    with _CSV_LOCK:
        previous = csv.field_size_limit()
        csv.field_size_limit(max(previous, len(text) + 1))
        reader = csv.reader(io.StringIO(text, newline=""))
        end = 0
        try:
            for fields in reader:
                if fields:
                    records.append((end + 1, fields))
                end = reader.line_num
        except csv.Error as exc:
            raise DatasetError(f"not readable as CSV: {exc}", file=path, row=f"line {end + 1}") from None
        finally:
            csv.field_size_limit(previous)
    return records


def _check_field(path: Path, line: int | str, column: str, value: Any) -> None:
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
        raise DatasetError(
            f"a field of {len(value):,} characters; the limit is {MAX_FIELD_CHARS:,}",
            file=path,
            row=f"line {line}" if isinstance(line, int) else line,
            field=column,
        )


def _rows(path: str | Path, *, header: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """``(row label, row)`` of a CSV (header required unless ``header`` is false: then the columns are
    ``0``, ``1`` ...), JSON (a list of objects, or ``{"rows": [...]}``), JSONL or parquet file. Every
    problem is a :class:`DatasetError` naming the file, the row and the column."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        if not path.exists():
            raise DatasetError("no such file", file=path)
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DatasetError(
                "reading parquet needs pyarrow (pip install pyarrow), or pass the CSV", file=path
            ) from None
        try:
            table = pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 - pyarrow's many errors: one typed error naming the file
            raise DatasetError(f"not readable as parquet: {exc}", file=path) from None
        out = [(f"#{i}", row) for i, row in enumerate(table)]
        for label, row in out:
            for column, value in row.items():
                _check_field(path, label, column, value)
        return out
    text = _text(path)
    if suffix in (".jsonl", ".json"):
        items: list[tuple[str, Any]] = []
        if suffix == ".json":
            try:
                data = loads_json(text)
            except (ValueError, RecursionError) as exc:
                raise DatasetError(f"invalid JSON: {json_problem(exc)}", file=path) from None
            if isinstance(data, dict) and isinstance(data.get("rows"), list):
                data = data["rows"]
            if not isinstance(data, list):
                raise DatasetError(
                    f'expected a list of row objects or {{"rows": [...]}}, got {describe(data)}', file=path
                )
            items = [(f"#{i}", row) for i, row in enumerate(data)]
        else:
            for number, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        items.append((f"line {number}", loads_json(line)))
                    except (ValueError, RecursionError) as exc:
                        raise DatasetError(
                            f"invalid JSON: {json_problem(exc)}", file=path, row=f"line {number}"
                        ) from None
        for label, row in items:
            if not isinstance(row, dict):
                raise DatasetError(f"a row is a JSON object, got {describe(row)}", file=path, row=label)
            try:
                check_json_value(row, max_string=MAX_FIELD_CHARS, max_depth=8, root="")
            except DataLimitError as exc:
                raise DatasetError(exc.message, file=path, row=label, field=dotted(exc.path)) from None
        return items
    records = _csv_records(path, text)
    if not records:
        return []
    if header:
        line0, names = records[0]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise DatasetError(f"the header names {twice[0]!r} twice", file=path, row=f"line {line0}")
        records = records[1:]
    else:
        names = [str(i) for i in range(max(len(f) for _, f in records))]
    out = []
    for line, fields in records:
        if header and len(fields) != len(names):
            raise DatasetError(
                f"{len(fields)} fields; the header names {len(names)} columns", file=path, row=f"line {line}"
            )
        for column, value in zip(names, fields, strict=False):
            _check_field(path, line, column, value)
        out.append((f"line {line}", dict(zip(names, fields, strict=False))))
    return out


def read_table(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a CSV (header required), JSON, JSONL or parquet file as dicts. Raises
    :class:`DatasetError` naming the file, the row and the column of the first problem (not UTF-8, a
    field over :data:`MAX_FIELD_CHARS` characters, a row with another number of fields than the header,
    a JSON value that is not a row object, NaN, nesting)."""
    return [row for _, row in _rows(path)]


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


#: the flag values of the Figure Eight labels (``related`` is 2 in some rows of the release: not related)
_FLAGS = {"0": 0, "1": 1, "2": 2}
_CATEGORY = re.compile(r"^([A-Za-z_][\w]*)-([0-9])$")
#: columns of the official Figure Eight splits that are not labels
_NOT_LABELS = ("id", "split", "message", "original", "genre")


def _flag(file: Path, label: str, column: str, value: Any) -> int:
    """A 0/1/2 label value; anything else names its row and column (a non-numeric label used to read
    as 0: a silent "not related")."""
    flag = _FLAGS.get(str(value).strip())
    if flag is None:
        raise DatasetError(
            f"{describe(value)} is not a label value (0, 1 or 2)", file=file, row=label, field=column
        )
    return flag


def _categories(file: Path, label: str, text: Any) -> dict[str, int]:
    """``related-1;request-0;...`` as a dict (a malformed pair names its row)."""
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(
            "empty: the row's labels as name-0/name-1 pairs joined by ';'",
            file=file,
            row=label,
            field="categories",
        )
    out: dict[str, int] = {}
    for part in text.split(";"):
        match = _CATEGORY.match(part.strip())
        if match is None:
            raise DatasetError(
                f"malformed category {part[:40]!r}: each is name-0, name-1 or name-2, joined by ';'",
                file=file,
                row=label,
                field="categories",
            )
        out[match.group(1)] = _flag(file, label, "categories", match.group(2))
    return out


def _conflicts(file: Path, conflicting: list[str], what: str, strict: bool) -> None:
    """Ids whose rows disagree are dropped (which label is right cannot be told): named in a
    :class:`DatasetWarning`, or an error with ``strict``."""
    if not conflicting:
        return
    shown = ", ".join(conflicting[:5]) + (f" and {len(conflicting) - 5} more" if len(conflicting) > 5 else "")
    message = f"{len(conflicting)} ids have rows whose {what} conflict (ids {shown})"
    if strict:
        raise DatasetError(message, file=file, row=f"id {conflicting[0]}", field="id")
    warnings.warn(DatasetWarning(f"{file}: {message}: dropped"), stacklevel=3)


def load_disaster_messages(path: str | Path, *, min_chars: int = 40, strict: bool = False) -> list[Row]:
    """Filtered disaster messages from a file or folder (see the module docstring). Every file must be
    readable and have a ``message`` column; labels are 0/1/2 (the Udacity pair's ``categories``
    ``name-0;name-1;...`` strings, one per message id). Ids whose rows repeat with the same content
    are read once; ids whose rows conflict (the releases have a few) are dropped with a
    :class:`DatasetWarning` naming them (an error with ``strict``)."""
    path = Path(path)
    if not path.exists():
        raise DatasetError("no such file or folder", file=path)
    files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
    if not files:
        raise DatasetError("no .csv file in the folder", file=path)
    rows: list[Row] = []
    seen: set[str] = set()
    for file in files:
        if file.name == "disaster_categories.csv":
            continue
        table = _rows(file)
        if not table:
            raise DatasetError("no rows", file=file)
        columns = table[0][1]
        if "message" not in columns:
            raise DatasetError(
                f"no 'message' column (columns: {', '.join(map(str, columns))[:200]})",
                file=file,
                field="message",
            )
        by_id: dict[str, dict[str, Any]] = {}
        conflicting: list[str] = []
        labels: dict[str, dict[str, int]] = {}
        if "related" not in columns:  # the Udacity pair keeps the labels in a second file
            categories = file.with_name("disaster_categories.csv")
            if not categories.exists():
                raise DatasetError(
                    "no 'related' column and no disaster_categories.csv beside it", file=file, field="related"
                )
            table_c = _rows(categories)
            if table_c and not {"id", "categories"} <= set(table_c[0][1]):
                raise DatasetError("the columns are id,categories", file=categories, field="categories")
            for label, row in table_c:
                key = str(row["id"]).strip()
                flags = _categories(categories, label, row["categories"])
                if key in labels and labels[key] != flags:
                    conflicting.append(key)
                labels[key] = flags
        for label, row in table:
            key = str(row.get("id", label)).strip()
            if key in by_id:
                if by_id[key] != row:
                    conflicting.append(key)
                continue
            by_id[key] = row
        dropped = set(conflicting)
        _conflicts(file, sorted(dropped), "labels or texts", strict)
        for label, row in table:
            key = str(row.get("id", label)).strip()
            if key in dropped or by_id.get(key) is not row:
                continue
            text = " ".join(str(row.get("message") or "").split())
            if labels:
                if key not in labels:
                    raise DatasetError(
                        f"id {key!r} has no row in disaster_categories.csv", file=file, row=label, field="id"
                    )
                flags = labels[key]
            else:
                flags = {k: _flag(file, label, k, v) for k, v in row.items() if k not in _NOT_LABELS}
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
            rows.append(Row(text, "emergency", f"figure8:{file.name}:{row.get('id', label)}", set_flags))
    if not rows:
        raise DatasetError("no disaster message passed the filters", file=path)
    return rows


#: the label vocabularies of the payload corpora (any other value names its row: it used to read as benign)
_DEEPSET = {"0": "benign", "1": "injection"}
_JACKHHAO = {"jailbreak": "injection", "benign": "benign"}
_VERAZUO = {"true": "injection", "1": "injection", "false": "benign", "0": "benign"}


def load_payload_rows(path: str | Path) -> list[Row]:
    """Injection / jailbreak / benign prompts from a deepset (``text,label``), jackhhao (``prompt,type``)
    or verazuo (``prompt,jailbreak``) file. A label outside the corpus's vocabulary, or an empty text,
    is a :class:`DatasetError` naming the row and the column."""
    path = Path(path)
    table = _rows(path)
    if not table:
        raise DatasetError("empty: no rows", file=path)
    columns = set(table[0][1])
    if {"text", "label"} <= columns:
        name, text_column, label_column, vocabulary = "deepset", "text", "label", _DEEPSET
    elif {"prompt", "type"} <= columns:
        name, text_column, label_column, vocabulary = "jackhhao", "prompt", "type", _JACKHHAO
    elif {"prompt", "jailbreak"} <= columns:
        name, text_column, label_column, vocabulary = "verazuo", "prompt", "jailbreak", _VERAZUO
    else:
        raise DatasetError(
            f"unknown columns {sorted(map(str, columns))[:12]} (expected text,label or prompt,type or "
            "prompt,jailbreak)",
            file=path,
        )
    rows = []
    for i, (label, row) in enumerate(table):
        value = row.get(label_column)
        key = str(value).strip().lower() if not isinstance(value, bool) else str(value).lower()
        if isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
            key = str(int(value))
        if key not in vocabulary:
            raise DatasetError(
                f"{describe(value)} is not a {name} label ({', '.join(vocabulary)})"
                + did_you_mean(key, vocabulary),
                file=path,
                row=label,
                field=label_column,
            )
        text = row.get(text_column)
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(
                f"empty {text_column}: a payload row holds a prompt", file=path, row=label, field=text_column
            )
        rows.append(Row(text.strip(), vocabulary[key], f"{name}:{path.name}:{i}"))
    return rows


PRIORITIES = ("HIGH", "MEDIUM", "LOW")


def load_emergency_utterances(path: str | Path, *, strict: bool = False) -> list[Row]:
    """911PQ-style ``utterance,priority`` rows (no header): label = the priority (HIGH/MEDIUM/LOW;
    surrounding spaces, as in the release, are fine). A row with more than two fields, an empty
    utterance or another priority is a :class:`DatasetError` naming the row; a row without a priority
    (the release has one) is dropped with a :class:`DatasetWarning` naming it (an error with
    ``strict``)."""
    path = Path(path)
    table = _rows(path, header=False)
    if not table:
        raise DatasetError("empty: no rows", file=path)
    rows = []
    unlabelled: list[str] = []
    for i, (label, row) in enumerate(table):
        fields = [row[k] for k in sorted(row, key=int) if row[k] is not None]
        if len(fields) > 2:
            raise DatasetError(
                f"{len(fields)} fields; a row is utterance,priority (quote an utterance holding a comma)",
                file=path,
                row=label,
            )
        utterance = fields[0].strip()
        if not utterance:
            raise DatasetError("empty utterance", file=path, row=label, field="utterance")
        if len(fields) < 2 or not fields[1].strip():
            if strict:
                raise DatasetError("no priority", file=path, row=label, field="priority")
            unlabelled.append(label)
            continue
        priority = fields[1].strip().upper()
        if priority not in PRIORITIES:
            raise DatasetError(
                f"{fields[1].strip()[:40]!r} is not a priority ({', '.join(PRIORITIES)})."
                + did_you_mean(priority, PRIORITIES),
                file=path,
                row=label,
                field="priority",
            )
        rows.append(Row(utterance, priority, f"911pq:{path.name}:{i}"))
    if unlabelled:
        warnings.warn(
            DatasetWarning(
                f"{path}: {len(unlabelled)} rows without a priority dropped ({', '.join(unlabelled[:5])})"
            ),
            stacklevel=2,
        )
    if not rows:
        raise DatasetError("no row has a priority", file=path)
    return rows


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
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise EnvUsageError(f"sample takes a whole number n >= 0, got {describe(n)}")
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
        raise DatasetError("load_hf needs the datasets package (the train extra)", file=name) from None
    try:
        data = load_dataset(name, split=split)
    except Exception as exc:  # noqa: BLE001 - offline, unknown name: one typed error
        raise DatasetError(f"cannot load ({type(exc).__name__}: {exc})", file=name) from None
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
