"""Facts compared by meaning, not spelling: a small normaliser for the value kinds goal conditions name.

A goal that certifies "the reply tells the client the workshop starts on 9 March" must accept every way a
careful agent writes that fact ("March 9", "9 March", "Mon 9 Mar", "2026-03-09", "Monday, March 9th")
and reject a different fact. Substring checks in the instruction's spelling do neither: they charge a
correct "2026-03-09" like a placeholder, and accept "4.12.1" inside "4.12.10". A :class:`Fact` names a
value and its kind; :func:`mentions` finds it in free text and :func:`same` compares two values.

Kinds and what counts as the same value:

* ``date``: ISO ``YYYY-MM-DD`` (or ``YYYY/MM/DD``); month names or 3-letter abbreviations before or after
  the day (``March 9``, ``9 March``, ``9th of Mar``), with an optional weekday before and an optional
  year after. A mention without a year matches the fact's month and day; a mention whose weekday is not
  the date's weekday is not that date. All-numeric day/month forms (``03/09``) are ambiguous between
  conventions and never match.
* ``time``: ``14:00``, ``14h``, ``14h30``, ``2 pm``, ``2:00 PM``, ``2 p.m.``, ``noon``, ``midnight``.
* ``number``: the value, with or without thousands separators (``3,000``, ``3000``, ``3 000``) or a
  ``k`` suffix (``4.5k``), with any currency (``$``, ``€``, ``£``, ``USD`` ...) or none.
* ``amount``: a number with a currency (``unit``): the currency may be written before or after, as a
  symbol or a code, or left out; a mention in another currency is not the amount.
* ``duration``: minutes, hours (``20 minutes``, ``20 min``, ``20-minute``, ``1.5 hours``, ``90 mins``,
  ``half an hour``), compared in minutes.
* ``weekday``, ``month``: full names or abbreviations (``Fri``, ``Thurs``, ``Sept``), any case; a full
  date on that weekday or in that month also mentions it.
* ``name``: people, places, products, phrases the user dictated: case, accents, punctuation and
  spacing are ignored; a mention is the name's words in order, as whole words. Two names are the same
  when their comma- or parenthesis-separated parts are the same in any order ("Northwind HQ, Harbor Room
  (3rd floor)" and "Harbor Room (3rd floor), Northwind HQ"), so "Room 3, Floor 5" is not "Room 5, Floor 3".
* ``identifier``: ticket, invoice, case and version ids: case-insensitive, as a whole token, so
  ``4.12.1`` is not found in ``4.12.10`` nor ``CASE-1`` in ``CASE-12``; a version may carry a ``v``.

A text that lists a scanned fact among two or more other values of its kind ("March 9, March 10 or
March 11", "2, 3 or 4 pm") hedges and states none of them: a policy cannot collect a goal by listing
candidates. One other value is ordinary prose ("from 600 to 3,000", "Friday, not Thursday").

:func:`spellings` gives, per kind, the other ways of writing a value that :func:`mentions` accepts; the
benchmarks' honest-variant probes rewrite gold's text with them. Every function is linear in the text.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

R = TypeVar("R")
ValueKind = Literal["date", "time", "number", "amount", "duration", "weekday", "month", "name", "identifier"]
VALUE_KINDS: tuple[str, ...] = (
    "date",
    "time",
    "number",
    "amount",
    "duration",
    "weekday",
    "month",
    "name",
    "identifier",
)
#: kinds found by scanning text (the others are matched as words)
SCANNED_KINDS: tuple[str, ...] = ("date", "time", "duration", "amount", "weekday", "month")

MONTHS = tuple(m.lower() for m in calendar.month_name[1:])
WEEKDAYS = tuple(d.lower() for d in calendar.day_name)
_MONTH_WORDS = {
    **{m: i + 1 for i, m in enumerate(MONTHS)},
    **{m[:3]: i + 1 for i, m in enumerate(MONTHS)},
    "sept": 9,
}
_WEEKDAY_WORDS = {
    **{d: i for i, d in enumerate(WEEKDAYS)},
    **{d[:3]: i for i, d in enumerate(WEEKDAYS)},
    "tues": 1,
    "weds": 2,
    "thur": 3,
    "thurs": 3,
}
CURRENCIES = {
    "$": "USD",
    "€": "EUR",
    "£": "GBP",
    "usd": "USD",
    "eur": "EUR",
    "gbp": "GBP",
    "chf": "CHF",
    "euro": "EUR",
    "euros": "EUR",
    "dollar": "USD",
    "dollars": "USD",
    "pound": "GBP",
    "pounds": "GBP",
}
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


class Fact(BaseModel):
    """A value a text must mention: ``kind`` says how it is compared (see the module docs); ``unit`` is
    the currency of an ``amount``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    kind: ValueKind
    value: str | int | float
    unit: str | None = None

    @classmethod
    def of(cls, text: str, *, year: int | None = None) -> Fact:
        """The fact ``text`` states, its kind inferred: a date (given ``year`` when it has none), time,
        duration, amount (with a currency) or number, weekday or month when ``text`` is exactly one;
        else an identifier when it is one token with a digit; else a name."""
        whole = [f for f in scan(text) if f.start == 0 and f.end == len(text)]
        if whole:
            found = whole[0]
            if found.kind == "date":
                day = plain_date(found.value, year)
                return cls(kind="date", value=day if not day.startswith("--") else text)
            if found.kind == "amount":
                currency = found.value[1]
                return cls(kind="amount" if currency else "number", value=text, unit=currency)
            return cls(kind=found.kind, value=text)  # type: ignore[arg-type]
        if not re.search(r"\s", text) and re.search(r"\d", text):
            return cls(kind="identifier", value=text)
        return cls(kind="name", value=text)

    @model_validator(mode="after")
    def _parses(self) -> Fact:
        if self.kind == "amount" and not self.unit:
            raise ValueError(
                "unit: an amount names its currency (e.g. 'EUR'); use kind 'number' for a bare number"
            )
        if canonical(self.kind, self.value) is None:
            raise ValueError(f"value: {self.value!r} is not a {self.kind}")
        return self


# -- scanning ---------------------------------------------------------------------------------------------
_MONTH_RE = r"(?P<{g}>" + "|".join(sorted(_MONTH_WORDS, key=len, reverse=True)) + r")\.?"
_WEEKDAY_RE = r"(?P<{g}>" + "|".join(sorted(_WEEKDAY_WORDS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<{g}>\d{{4}}))?"
_LEAD_WEEKDAY = r"(?:" + _WEEKDAY_RE.format(g="wd{n}") + r",?\s+(?:the\s+)?)?"
DATE_RE = re.compile(
    r"(?<![\w/-])(?:"
    r"(?P<iy>\d{4})[-/](?P<im>\d{1,2})[-/](?P<id>\d{1,2})(?![\w/-]|\.\d)"
    r"|"
    + _LEAD_WEEKDAY.format(n=1)
    + _MONTH_RE.format(g="m1")
    + r"\s+"
    + _DAY.format(g="d1")
    + _YEAR.format(g="y1")
    + r"(?![\w:])"
    + r"|"
    + _LEAD_WEEKDAY.format(n=2)
    + _DAY.format(g="d2")
    + r"(?:\s+of)?\s+"
    + _MONTH_RE.format(g="m2")
    + _YEAR.format(g="y2")
    + r"(?!\w)"
    + r")",
    re.IGNORECASE,
)
TIME_RE = re.compile(
    r"(?<![\w:.])(?:"
    r"(?P<h1>[01]?\d|2[0-3]):(?P<m1>[0-5]\d)(?:\s*(?P<ap1>[ap])\.?m\.?(?!\w))?(?![\w:])"
    r"|(?P<h2>1[0-2]|0?[1-9])\s*(?P<ap2>[ap])\.?m\.?(?!\w)"
    r"|(?P<h3>[01]?\d|2[0-3])h(?P<m3>[0-5]\d)?(?!\w)"
    r"|(?P<word>noon|midday|midnight)(?!\w)"
    r")",
    re.IGNORECASE,
)
_NUMBER = r"(?P<int>\d{1,3}(?:(?:,|\u202f|\u00a0|\s)\d{3})+(?!\d)|\d+)(?:\.(?P<frac>\d+))?"
AMOUNT_RE = re.compile(
    r"(?<![\w.])(?<!\w-)"
    r"(?:(?P<pre>[$€£]|(?:usd|eur|gbp|chf)(?!\w))\s?)?" + _NUMBER + r"(?P<k>\s?k(?!\w))?"
    r"(?:\s?(?P<post>[$€£]|(?:usd|eur|gbp|chf|euros?|dollars?|pounds?)(?!\w)))?"
    r"(?![\w])(?!\.\d)(?!-\w)",
    re.IGNORECASE,
)
DURATION_RE = re.compile(
    r"(?<![\w.])(?:(?P<n>\d+(?:\.\d+)?)[\s-]?(?P<unit>minutes?|mins?|hours?|hrs?|h)(?!\w)"
    r"|(?P<half>half an hour)|(?P<an>an hour|one hour))",
    re.IGNORECASE,
)
WEEKDAY_RE = re.compile(r"(?<!\w)" + _WEEKDAY_RE.format(g="w") + r"(?!\w)", re.IGNORECASE)
MONTH_RE = re.compile(r"(?<!\w)" + _MONTH_RE.format(g="mo") + r"(?!\w)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Found:
    """A value found in a text: its kind, canonical value and span."""

    kind: str
    value: Any
    start: int
    end: int


def _date(year: int | None, month: int, day: int, weekday: str | None) -> Any:
    """The canonical date (``YYYY-MM-DD``, or ``--MM-DD`` without a year); None if invalid, or if
    ``weekday`` contradicts it."""
    try:
        date = dt.date(year if year is not None else 2000, month, day)  # 2000: a leap year
    except ValueError:
        return None
    if year is None:  # the weekday is checked against the year of the date it is compared with
        return f"--{month:02d}-{day:02d}" + (f"@{_WEEKDAY_WORDS[weekday.lower()]}" if weekday else "")
    if weekday is not None and _WEEKDAY_WORDS[weekday.lower()] != date.weekday():
        return None
    return date.isoformat()


def _scan_dates(text: str) -> Iterator[Found]:
    for m in DATE_RE.finditer(text):
        if m.group("iy"):
            value = _date(int(m.group("iy")), int(m.group("im")), int(m.group("id")), None)
        else:
            n = "1" if m.group("m1") else "2"
            year = m.group(f"y{n}")
            value = _date(
                int(year) if year else None,
                _MONTH_WORDS[m.group(f"m{n}").lower()],
                int(m.group(f"d{n}")),
                m.group(f"wd{n}"),
            )
        if value is not None:
            yield Found("date", value, m.start(), m.end())


def _scan_times(text: str) -> Iterator[Found]:
    for m in TIME_RE.finditer(text):
        if m.group("word"):
            hour, minute = (0 if m.group("word").lower() == "midnight" else 12), 0
        elif m.group("h1") is not None:
            hour, minute = int(m.group("h1")), int(m.group("m1"))
            if m.group("ap1"):
                if not 1 <= hour <= 12:
                    continue
                hour = hour % 12 + (12 if m.group("ap1").lower() == "p" else 0)
        elif m.group("h2") is not None:
            hour = int(m.group("h2")) % 12 + (12 if m.group("ap2").lower() == "p" else 0)
            minute = 0
        else:
            hour, minute = int(m.group("h3")), int(m.group("m3") or 0)
        yield Found("time", f"{hour:02d}:{minute:02d}", m.start(), m.end())


def _number(int_part: str, frac: str | None, thousands: bool) -> Decimal | None:
    digits = re.sub(r"[,\s\u202f\u00a0]", "", int_part)
    try:
        value = Decimal(f"{digits}.{frac}" if frac else digits)
    except InvalidOperation:
        return None
    return value * 1000 if thousands else value


def _scan_amounts(text: str) -> Iterator[Found]:
    for m in AMOUNT_RE.finditer(text):
        value = _number(m.group("int"), m.group("frac"), bool(m.group("k")))
        if value is None:
            continue
        pre, post = m.group("pre"), m.group("post")
        codes = {CURRENCIES[c.lower()] for c in (pre, post) if c}
        if len(codes) > 1:
            continue  # "$4,500 EUR": no single amount
        yield Found("amount", (value.normalize(), next(iter(codes), None)), m.start(), m.end())


def _scan_durations(text: str) -> Iterator[Found]:
    for m in DURATION_RE.finditer(text):
        if m.group("half"):
            minutes = Decimal(30)
        elif m.group("an"):
            minutes = Decimal(60)
        else:
            n = Decimal(m.group("n"))
            minutes = n * 60 if m.group("unit").lower().startswith("h") else n
        yield Found("duration", minutes.normalize(), m.start(), m.end())


def _scan_words(
    text: str, pattern: re.Pattern[str], group: str, kind: str, table: dict[str, int]
) -> Iterator[Found]:
    for m in pattern.finditer(text):
        yield Found(kind, table[m.group(group).lower()], m.start(), m.end())


class TextCache(Generic[R]):
    """A least-recently-used cache of a function of one text, bounded in entries *and* in characters:
    ``functools.lru_cache(maxsize=n)`` holds n texts of any length, and an agent's texts (a 30,000-
    character answer, an episode's tool outputs) would make that megabytes per entry. Texts over
    ``max_chars`` alone are computed, never stored."""

    def __init__(self, fn: Callable[[str], R], max_entries: int, max_chars: int):
        self.fn = fn
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._data: OrderedDict[str, R] = OrderedDict()
        self._chars = 0
        functools.update_wrapper(self, fn)

    def __call__(self, text: str) -> R:
        data = self._data
        if text in data:
            data.move_to_end(text)
            return data[text]
        value = self.fn(text)
        if len(text) <= self.max_chars:
            data[text] = value
            self._chars += len(text)
            while len(data) > self.max_entries or self._chars > self.max_chars:
                old, _ = data.popitem(last=False)
                self._chars -= len(old)
        return value

    def cache_clear(self) -> None:
        self._data.clear()
        self._chars = 0


def text_cache(max_entries: int, max_chars: int) -> Callable[[Callable[[str], R]], TextCache[R]]:
    """Decorator: :class:`TextCache` (at most ``max_entries`` texts, ``max_chars`` characters in all)."""
    return lambda fn: TextCache(fn, max_entries, max_chars)


@text_cache(max_entries=2048, max_chars=4_000_000)
def scan(text: str) -> tuple[Found, ...]:
    """Every date, time, duration, amount, weekday and month in ``text``, without overlaps (a date's
    day is not also a number, its weekday and month not also mentioned apart), in text order (cached:
    a judge reads one text for several facts)."""
    found: list[Found] = []
    taken = bytearray(len(text))  # 1 where a value was found: linear, however many values there are

    scanners = (
        _scan_dates(text),
        _scan_times(text),
        _scan_durations(text),
        _scan_amounts(text),
        _scan_words(text, WEEKDAY_RE, "w", "weekday", _WEEKDAY_WORDS),
        _scan_words(text, MONTH_RE, "mo", "month", _MONTH_WORDS),
    )
    for scanner in scanners:
        for f in scanner:
            if not any(taken[f.start : f.end]):
                found.append(f)
                taken[f.start : f.end] = b"\x01" * (f.end - f.start)
    return tuple(sorted(found, key=lambda f: f.start))


# -- canonical values ------------------------------------------------------------------------------------
def _words(text: str) -> str:
    """Lower case, accents dropped, every run of non-alphanumerics one space."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.findall(r"[a-z0-9]+", plain.lower()))


def _name_parts(text: str) -> list[str]:
    return sorted(p for p in (_words(part) for part in re.split(r"[,;()\[\]|/]", text)) if p)


def canonical(kind: str, value: Any) -> Any:
    """The canonical form of ``value`` as a ``kind`` (None if it is not one): what :func:`same` compares."""
    if kind in ("number", "amount") and isinstance(value, int | float) and not isinstance(value, bool):
        return Decimal(str(value)).normalize()
    if kind == "duration" and isinstance(value, int | float) and not isinstance(value, bool):
        return Decimal(str(value)).normalize()  # minutes
    if not isinstance(value, str):
        return None
    text = value.strip()
    if kind == "name":
        return _name_parts(text) or None
    if kind == "identifier":
        return text.lower() if text and not re.search(r"\s", text) else None
    whole = [f for f in scan(text) if f.start == 0 and f.end == len(text)]
    wanted = "amount" if kind == "number" else kind
    for f in whole:
        if f.kind == wanted:
            return f.value[0] if kind in ("number", "amount") else f.value
    return None


def same(a: Any, b: Any, kind: str) -> bool:
    """Whether ``a`` and ``b`` are the same ``kind`` of value (both must parse as one)."""
    ca, cb = canonical(kind, a), canonical(kind, b)
    return ca is not None and ca == cb


def plain_date(found: str, year: int | None = None) -> str:
    """A scanned date's value without its weekday mark: ``YYYY-MM-DD``, or ``--MM-DD`` without a year
    (in ``year`` when one is given)."""
    value = found.partition("@")[0]
    return f"{year}{value[1:]}" if year is not None and value.startswith("--") else value


def _date_matches(found: str, wanted: str) -> bool:
    """A found date against a wanted one. Without a year (``--MM-DD``, ``@N`` when a weekday was
    written) the found date is the wanted year's, and its weekday must be that date's weekday."""
    wanted = wanted.partition("@")[0]
    if wanted.startswith("--"):  # a wanted date without a year: any year's
        return found.partition("@")[0][-5:] == wanted[-5:]
    if not found.startswith("--"):
        return found == wanted
    month_day, _, weekday = found.partition("@")
    if wanted[4:] != month_day[1:]:
        return False
    return not weekday or dt.date.fromisoformat(wanted).weekday() == int(weekday)


def _date_weekday(found: Found) -> int | None:
    """The weekday a found date states or implies (None for another kind, or a year-less date without one)."""
    if found.kind != "date":
        return None
    value, _, weekday = found.value.partition("@")
    if weekday:
        return int(weekday)
    return None if value.startswith("--") else dt.date.fromisoformat(value).weekday()


def mentions(text: Any, fact: Fact) -> bool:
    """Whether ``text`` states ``fact`` (see the module docs for what counts, per kind)."""
    if not isinstance(text, str):
        return False
    wanted = canonical(fact.kind, fact.value)
    if wanted is None:
        return False
    if fact.kind == "name":
        phrase = _words(str(fact.value))
        return bool(phrase) and f" {phrase} " in f" {_words(text)} "
    if fact.kind == "identifier":
        body = re.escape(str(fact.value).strip())
        return re.search(rf"(?<![\w.-])(?:v)?{body}(?!\w|[.-]\w)", text, re.IGNORECASE) is not None
    found = scan(text)
    matching = [f for f in found if _matches(f, fact, wanted)]
    if not matching:
        return False
    # a text that lists the fact among other candidates of its kind ("March 9, March 10 or March 11")
    # hedges: it states no one of them
    kind = "amount" if fact.kind == "number" else fact.kind
    others = {_key(f) for f in found if f.kind == kind and f not in matching}
    return len(others) < HEDGE


#: how many other values of the fact's kind make a text a hedge (one is prose: "from 600 to 3,000")
HEDGE = 2


def _key(found: Found) -> Any:
    return found.value[0] if found.kind == "amount" else str(found.value).partition("@")[0]


def _matches(found: Found, fact: Fact, wanted: Any) -> bool:
    if fact.kind == "date":
        return found.kind == "date" and _date_matches(found.value, wanted)
    if fact.kind in ("number", "amount"):
        unit = fact.unit.upper() if fact.unit else None
        return (
            found.kind == "amount"
            and found.value[0] == wanted
            and (unit is None or found.value[1] in (None, unit))
        )
    if fact.kind == "weekday":
        return (found.kind == "weekday" and found.value == wanted) or _date_weekday(found) == wanted
    if fact.kind == "month":
        return (found.kind == "month" and found.value == wanted) or (
            found.kind == "date" and int(found.value.partition("@")[0][-5:-3]) == wanted
        )
    return found.kind == fact.kind and found.value == wanted


# -- other spellings ------------------------------------------------------------------------------------
def _grouped(value: Decimal, sep: str = ",") -> str:
    integer, _, frac = f"{value:f}".partition(".")
    groups = f"{int(integer):,}".replace(",", sep)
    return f"{groups}.{frac}" if frac else groups


def spellings(kind: str, value: Any, *, unit: str | None = None) -> dict[str, str]:
    """Ways of writing a ``kind`` value that :func:`mentions` accepts, by style name (empty when the value
    does not parse; a style may spell it as it was given)."""
    c = canonical(kind, value)
    if c is None:
        return {}
    out: dict[str, str] = {}
    if kind == "date" and not str(c).startswith("--"):
        d = dt.date.fromisoformat(c)
        month, wd = calendar.month_name[d.month], calendar.day_name[d.weekday()]
        out = {
            "iso": d.isoformat(),
            "day_month": f"{d.day} {month}",
            "month_day": f"{month} {d.day}",
            "weekday_month_day": f"{wd}, {month} {d.day}",
            "weekday_day_month_short": f"{wd[:3]} {d.day} {month[:3]}",
            "ordinal_of_month_year": f"{d.day}{_ordinal(d.day)} of {month} {d.year}",
        }
    elif kind == "time":
        hour, minute = (int(x) for x in c.split(":"))
        h12 = hour % 12 or 12
        ap = "pm" if hour >= 12 else "am"
        out = {
            "24h": c,
            "12h": f"{h12} {ap}" if minute == 0 else f"{h12}:{minute:02d} {ap}",
            "12h_upper": f"{h12}:{minute:02d} {ap.upper()}",
            "h_suffix": f"{hour}h{minute:02d}" if minute else f"{hour}h",
        }
    elif kind in ("number", "amount"):
        code = unit.upper() if unit else None
        out = {"plain": f"{c:f}", "grouped": _grouped(c), "space_grouped": _grouped(c, " ")}
        if code:
            out |= {"code_before": f"{code} {_grouped(c)}", "code_after": f"{_grouped(c)} {code}"}
            if code in CURRENCY_SYMBOLS:
                out["symbol_before"] = f"{CURRENCY_SYMBOLS[code]}{_grouped(c)}"
    elif kind == "duration":
        minutes = int(c) if c == int(c) else None
        out = {"minutes": f"{c:f} minutes", "min": f"{c:f} min"}
        if minutes is not None and minutes % 30 == 0 and minutes >= 60:
            hours = Decimal(minutes) / 60
            out["hours"] = f"{hours.normalize():f} hour{'s' if hours != 1 else ''}"
    elif kind == "weekday":
        name = calendar.day_name[c]
        out = {"full": name, "short": name[:3], "lower": name.lower()}
    elif kind == "month":
        name = calendar.month_name[c]
        out = {"full": name, "short": name[:3], "lower": name.lower()}
    elif kind in ("name", "identifier"):
        out = {"lower": str(value).lower(), "upper": str(value).upper()}
        parts = [p.strip() for p in re.split(r"[,;()\[\]|/]", str(value)) if p.strip()]
        if kind == "name" and len(parts) > 1:
            out["parts_reordered"] = ", ".join(parts[1:] + parts[:1])
        if kind == "identifier" and str(value)[:1].isdigit():
            out["v_prefix"] = f"v{value}"
    return out


def _ordinal(day: int) -> str:
    return "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def neighbours(fact: Fact, n: int = 2) -> list[str]:
    """``n`` other values of ``fact``'s kind near it (the next days, hours, numbers, weekdays ...): what a
    text hedging between candidates would list beside it. Empty for names and identifiers."""
    c = canonical(fact.kind, fact.value)
    if c is None:
        return []
    steps = range(1, n + 1)
    if fact.kind == "date":
        if str(c).startswith("--"):
            c = f"2000{str(c)[1:6]}"
        day = dt.date.fromisoformat(str(c)[:10])
        return [(day + dt.timedelta(days=k)).isoformat() for k in steps]
    if fact.kind == "time":
        hour, minute = (int(x) for x in c.split(":"))
        return [f"{(hour + k) % 24:02d}:{minute:02d}" for k in steps]
    if fact.kind in ("number", "amount"):
        suffix = f" {fact.unit.upper()}" if fact.unit else ""
        return [f"{_grouped(c + k)}{suffix}" for k in steps]
    if fact.kind == "duration":
        return [f"{c + 5 * k:f} minutes" for k in steps]
    if fact.kind == "weekday":
        return [calendar.day_name[(c + k) % 7] for k in steps]
    if fact.kind == "month":
        return [calendar.month_name[(c - 1 + k) % 12 + 1] for k in steps]
    return []
