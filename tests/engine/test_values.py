"""The value normaliser (envs/core/values.py): the same fact in every format a careful writer uses is
found, and a different fact, a contradicted weekday or a longer id is not."""

from __future__ import annotations

import pytest

from tooltrap.envs.core import ExistsCondition, FieldCondition, GoalContext, State
from tooltrap.envs.core.values import Fact, canonical, mentions, same, scan, spellings

# (kind, value, unit, texts that state it, texts that do not)
TABLE = [
    (
        "date",
        "2026-03-09",
        None,
        [
            "Monday, March 9",
            "9 March",
            "March 9th",
            "2026-03-09",
            "2026/03/09",
            "Mon 9 Mar",
            "9th of March 2026",
            "on mar. 9, 2026, at noon",
            "the Monday, 9th March",
        ],
        ["March 19", "Tuesday, March 9", "9 March 2027", "03/09", "2026-03-10", "March 90"],
    ),
    (
        "time",
        "14:00",
        None,
        ["14:00", "2 pm", "2pm", "2:00 PM", "2 p.m.", "14h", "at 14:00."],
        ["2:30 pm", "4 pm", "14:30"],
    ),
    ("time", "12:00", None, ["noon", "12 pm", "12:00"], ["12 am", "midnight"]),
    (
        "amount",
        "4,500 EUR",
        "EUR",
        ["4,500 EUR", "4500", "EUR 4,500", "€4,500", "4 500 euros", "4.5k EUR", "a cap of 4,500."],
        ["$4,500", "45,000 EUR", "4,501", "45.00", "INV-4500"],
    ),
    (
        "number",
        "3,000",
        None,
        ["3,000", "3000", "3 000 requests", "$3,000", "from 600 to 3,000."],
        ["30,000", "3.000.1"],
    ),
    (
        "duration",
        "20 minutes",
        None,
        ["20 minutes", "20 min", "a 20-minute slot", "20 mins"],
        ["2 hours", "20 hours", "200 minutes"],
    ),
    ("duration", 90, None, ["1.5 hours", "90 minutes", "90 min"], ["1 hour", "9 minutes"]),
    (
        "weekday",
        "Friday",
        None,
        ["Friday", "Fri", "fri.", "Friday, March 13", "2026-03-13"],
        ["Thursday", "Fries", "2026-03-12"],
    ),
    ("month", "June", None, ["June", "Jun", "starting June 1", "2026-06-01"], ["July", "Juneau"]),
    (
        "name",
        "Mill House",
        None,
        ["Let's go with the mill house.", "MILL-HOUSE", "the Mill  House"],
        ["Mill Houses", "the House Mill", "Millhouse"],
    ),
    (
        "identifier",
        "4.12.1",
        None,
        ["fixed in 4.12.1.", "v4.12.1", "(4.12.1)"],
        ["4.12.10", "14.12.1", "4.12.1.3", "4.12"],
    ),
    ("identifier", "CASE-409442", None, ["see case-409442", "CASE-409442."], ["CASE-4094421", "CASE-40944"]),
]


@pytest.mark.parametrize(("kind", "value", "unit", "yes", "no"), TABLE, ids=[f"{r[0]}-{r[1]}" for r in TABLE])
def test_a_fact_is_found_in_every_format_and_only_there(kind, value, unit, yes, no):
    fact = Fact(kind=kind, value=value, unit=unit)
    assert [t for t in yes if not mentions(t, fact)] == []
    assert [t for t in no if mentions(t, fact)] == []


@pytest.mark.parametrize(("kind", "value", "unit"), [(r[0], r[1], r[2]) for r in TABLE])
def test_every_other_spelling_is_accepted(kind, value, unit):
    fact = Fact(kind=kind, value=value, unit=unit)
    others = spellings(kind, value, unit=unit)
    assert others, "each kind offers other spellings"
    assert [s for s in others.values() if not mentions(s, fact)] == []


def test_names_compare_by_parts_in_any_order_but_keep_the_words_of_each_part():
    assert same("Northwind HQ, Harbor Room (3rd floor)", "harbor room (3rd floor), northwind hq", "name")
    assert not same("Room 3, Floor 5", "Room 5, Floor 3", "name")
    assert not same("Northwind HQ, Harbor Room", "Northwind HQ, Lighthouse Room", "name")


def test_dates_without_a_year_and_contradicting_weekdays():
    assert canonical("date", "March 9") == "--03-09"
    assert same("9 March 2026", "2026-03-09", "date")
    # 14 April 2026 is a Tuesday: "Monday, April 14" is not that date
    assert not mentions("we launch on Monday, April 14", Fact(kind="date", value="2026-04-14"))


def test_scan_does_not_double_count_a_date_or_an_identifier():
    kinds = [f.kind for f in scan("Friday, March 13 at 2 pm: 4,500 EUR for 20 minutes (INV-78918, 4.12.1)")]
    assert kinds == ["date", "time", "amount", "duration"]


def test_a_fact_must_parse_as_its_kind():
    with pytest.raises(ValueError, match="not a date"):
        Fact(kind="date", value="soon")
    with pytest.raises(ValueError, match="currency"):
        Fact(kind="amount", value="4,500")
    assert Fact.of("1,200 EUR", year=2026) == Fact(kind="amount", value="1,200 EUR", unit="EUR")
    assert Fact.of("Tuesday, April 14", year=2026).value == "2026-04-14"
    assert Fact.of("INV-78918").kind == "identifier"
    assert Fact.of("trust portal").kind == "name"


def test_goal_conditions_compare_facts_by_meaning():
    state = State({"messages": {"m1": {"id": "m1", "body": "We launch on 2026-04-14.", "to": ["a@x.io"]}}})
    ctx = GoalContext(state, None, 0, None, None)
    said = ExistsCondition(collection="messages", mentions={"body": [Fact(kind="date", value="2026-04-14")]})
    other = ExistsCondition(collection="messages", mentions={"body": [Fact(kind="date", value="2026-04-21")]})
    assert said.check(ctx) and not other.check(ctx)
    field = FieldCondition(entity="messages/m1", field="body", op="contains", value="April 14", kind="date")
    spelled = FieldCondition(entity="messages/m1", field="body", op="contains", value="April 14")
    assert field.check(ctx) and not spelled.check(ctx)  # without a kind the check is the spelling
    with pytest.raises(ValueError, match="not a time"):
        FieldCondition(entity="messages/m1", field="body", op="eq", value="later", kind="time")


def test_hostile_text_costs_linear_time():
    text = "1," * 20_000 + "9 March " * 2_000 + "x" * 50_000
    found = scan(text)
    assert len([f for f in found if f.kind == "date"]) == 2_000


def test_text_caches_are_bounded_in_characters_not_only_entries():
    """An agent's texts may be 30,000 characters (an answer) or an episode's tool outputs: a cache of
    2,048 of them was megabytes per entry (issue 24: memory flat under fuzzing)."""
    from tooltrap.envs.core.values import TextCache

    calls = []
    cached = TextCache(lambda text: calls.append(text) or len(text), max_entries=3, max_chars=10)
    assert [cached("abcd"), cached("abcd"), cached("efgh")] == [4, 4, 4] and calls == ["abcd", "efgh"]
    cached("ijkl")  # 12 characters stored would be over the budget: the oldest goes
    assert cached("abcd") == 4 and calls == ["abcd", "efgh", "ijkl", "abcd"]
    cached("x" * 11)
    cached("x" * 11)  # over the budget alone: computed each time, never stored
    assert calls.count("x" * 11) == 2 and cached("ijkl") == 4 and calls.count("ijkl") == 1
    assert scan.max_chars >= 1_000_000 and len(scan("the 9 March 2026 meeting")) == 1
