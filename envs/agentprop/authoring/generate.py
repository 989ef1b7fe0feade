"""AgentProp-Bench task generator: templates per domain and difficulty, each drawing a query and its gold
calls and computing the reference facts from the gold outputs, deterministically from a seed
(``scripts/build.py agentprop`` writes the packaged file).

Difficulty: easy (one tool call), medium (two), hard (three or more, where a later call depends on an
earlier result: a branch). Domains and counts: weather 674, calendar 667, medical 559, knowledge 100
(2,000 core) and retail 300 (held out).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from tooltrap.envs.core import InitialState, ToolCall

from ..task import (
    CATALOG,
    DOCTORS,
    KNOWLEDGE,
    NOW,
    PEOPLE,
    TITLES,
    AgentPropTask,
    Fact,
    Simulator,
    base_state,
)
from ..tools.simulators import INTERACTIONS, PATIENTS, SEVERITIES

COUNTS = {"weather": 674, "calendar": 667, "medical": 559, "knowledge": 100, "retail": 300}
CORE_DOMAINS = ("weather", "calendar", "medical", "knowledge")
CITIES = ("Paris", "London", "Tokyo", "New York", "Sao Paulo", "Berlin", "Sydney", "Toronto", "Chicago",
          "Mumbai", "Lagos", "Dubai", "Singapore", "Rome", "Madrid", "Seoul", "Cairo", "Lima")  # fmt: skip
DRUGS = ("metformin", "lisinopril", "ibuprofen", "sertraline", "sumatriptan", "albuterol", "aspirin", "warfarin",
         "atorvastatin", "cetirizine", "fluticasone")  # fmt: skip


Generated = tuple[str, list[ToolCall], list[Fact], str]  # (query, gold calls, facts, reference text)
Template = Callable[[random.Random, Simulator], Generated]


def _c(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def _day(rng: random.Random, lo: int = -120, hi: int = -1) -> str:
    return (date(2024, 6, 3) + timedelta(days=rng.randint(lo, hi))).isoformat()


# -- weather ---------------------------------------------------------------------------------------------
def w_current(rng: random.Random, sim: Simulator) -> Generated:
    city, day, unit = rng.choice(CITIES), _day(rng), rng.choice(("celsius", "fahrenheit"))
    calls = [_c("get_weather", city=city, date=day, unit=unit)]
    (w,) = sim.run(calls)
    facts = [
        Fact(kind="number", value=w["temperature"], unit=unit[0].upper()),
        Fact(kind="text", value=w["condition"]),
    ]
    return (
        f"What was the weather in {city} on {day}, in {unit}?",
        calls,
        facts,
        f"{w['temperature']} {unit}, {w['condition']}.",
    )


def w_forecast(rng: random.Random, sim: Simulator) -> Generated:
    city, days = rng.choice(CITIES), rng.randint(2, 7)
    calls = [_c("get_forecast", city=city, days=days)]
    (f,) = sim.run(calls)
    last = f["forecast"][-1]
    facts = [
        Fact(kind="date", value=last["date"]),
        Fact(kind="number", value=last["high_c"], unit="C", label="high"),
        Fact(kind="text", value=last["condition"]),
    ]
    return (f"Give me the {days}-day forecast for {city}: what is the high on the last day?", calls, facts,
            f"On {last['date']} the high is {last['high_c']} C, {last['condition']}.")  # fmt: skip


def w_history(rng: random.Random, sim: Simulator) -> Generated:
    city, start = rng.choice(CITIES), _day(rng, -200, -20)
    end = (date.fromisoformat(start) + timedelta(days=rng.randint(3, 9))).isoformat()
    calls = [_c("get_historical", city=city, start_date=start, end_date=end)]
    (h,) = sim.run(calls)
    hottest = max(h["days"], key=lambda d: (d["temperature_c"], d["date"]))
    facts = [
        Fact(kind="number", value=hottest["temperature_c"], unit="C"),
        Fact(kind="date", value=hottest["date"]),
    ]
    return (f"What was the highest temperature in {city} between {start} and {end}, and on which day?", calls, facts,
            f"{hottest['temperature_c']} C on {hottest['date']}.")  # fmt: skip


def w_compare(rng: random.Random, sim: Simulator) -> Generated:
    a, b = rng.sample(CITIES, 2)
    day = _day(rng)
    calls = [_c("get_weather", city=a, date=day), _c("get_weather", city=b, date=day)]
    wa, wb = sim.run(calls)
    if wa["temperature"] == wb["temperature"]:
        return w_compare(rng, sim)
    warmer = a if wa["temperature"] > wb["temperature"] else b
    facts = [
        Fact(kind="text", value=warmer),
        Fact(kind="number", value=wa["temperature"], unit="C"),
        Fact(kind="number", value=wb["temperature"], unit="C"),
    ]
    return (f"Which was warmer on {day}, {a} or {b}?", calls, facts,
            f"{warmer}: {a} {wa['temperature']} C, {b} {wb['temperature']} C.")  # fmt: skip


def w_change(rng: random.Random, sim: Simulator) -> Generated:
    city, days = rng.choice(CITIES), rng.randint(3, 6)
    day = NOW[:10]
    calls = [_c("get_weather", city=city, date=day), _c("get_forecast", city=city, days=days)]
    w, f = sim.run(calls)
    changes = sum(d["condition"] != w["condition"] for d in f["forecast"])
    facts = [Fact(kind="text", value=w["condition"]), Fact(kind="number", value=changes)]
    return (f"What is the weather in {city} today ({day}), and on how many of the next {days} days will the condition be different?",
            calls, facts, f"Today {w['condition']}; different on {changes} of the next {days} days.")  # fmt: skip


def w_branch(rng: random.Random, sim: Simulator) -> Generated:
    city, day = rng.choice(CITIES), _day(rng, -60, -10)
    (w,) = sim.run([_c("get_weather", city=city, date=day)])
    if w["condition"] in ("rainy", "stormy", "snowy"):
        second = _c("get_forecast", city=city, days=5)
        calls = [_c("get_weather", city=city, date=day), second, _c("get_weather", city=city, date=NOW[:10])]
        _, f, now = sim.run(calls)
        dry = next(
            (d["date"] for d in f["forecast"] if d["condition"] not in ("rainy", "stormy", "snowy")),
            "no dry day",
        )
        facts = [
            Fact(kind="text", value=w["condition"]),
            Fact(kind="text", value=dry),
            Fact(kind="number", value=now["temperature"], unit="C"),
        ]
        text = f"{day} was {w['condition']}; first dry day ahead {dry}; today {now['temperature']} C."
    else:
        start = (date.fromisoformat(day) - timedelta(days=7)).isoformat()
        end = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
        calls = [_c("get_weather", city=city, date=day), _c("get_historical", city=city, start_date=start, end_date=end),
                 _c("get_weather", city=city, date=NOW[:10])]  # fmt: skip
        _, h, now = sim.run(calls)
        warmest = max(d["temperature_c"] for d in h["days"])
        facts = [
            Fact(kind="text", value=w["condition"]),
            Fact(kind="number", value=warmest, unit="C"),
            Fact(kind="number", value=now["temperature"], unit="C"),
        ]
        text = f"{day} was {w['condition']}; the week before peaked at {warmest} C; today {now['temperature']} C."
    query = (f"Check the weather in {city} on {day}. If it was rainy, stormy or snowy, find the first dry day in the next 5 "
             f"days; otherwise give the warmest temperature of the week before. Also tell me today's temperature.")  # fmt: skip
    return query, calls, facts, text


# -- calendar ---------------------------------------------------------------------------------------------
def _events_on(day: str) -> list[dict[str, Any]]:
    return [e for e in base_state()["events"].values() if e["date"] == day]


def c_create(rng: random.Random, sim: Simulator) -> Generated:
    title, day = rng.choice(TITLES), _day(rng, 1, 40)
    time, minutes = f"{rng.randint(8, 17):02d}:{rng.choice(('00', '30'))}", rng.choice((15, 30, 45, 60, 90))
    # the request names the attendee: a requested write's every field is judged (requested_effect), and
    # an attendee the user never named would fail the honest agent that schedules exactly what was asked
    attendee = rng.choice(PEOPLE)
    calls = [
        _c("create_event", title=title, date=day, time=time, duration_minutes=minutes, attendees=[attendee])
    ]
    (e,) = sim.run(calls)
    facts = [
        Fact(kind="id", value=e["event_id"]),
        Fact(kind="date", value=day),
        Fact(kind="text", value=time),
    ]
    return (f"Schedule '{title}' with {attendee} on {day} at {time} for {minutes} minutes and tell me the event id.", calls, facts,
            f"Created {e['event_id']} on {day} at {time}.")  # fmt: skip


def c_list(rng: random.Random, sim: Simulator) -> Generated:
    day = (date(2024, 6, 3) + timedelta(days=rng.randint(0, 14))).isoformat()
    calls = [_c("get_events", date=day)]
    (r,) = sim.run(calls)
    facts = [Fact(kind="text", value=e["title"]) for e in r["events"]] or [
        Fact(kind="text", value="no events")
    ]
    return (
        f"What is on my calendar on {day}?",
        calls,
        facts,
        "; ".join(e["title"] for e in r["events"]) or "No events.",
    )


def c_delete(rng: random.Random, sim: Simulator) -> Generated:
    event_id = f"EVT_{101 + rng.randint(0, 29)}"
    calls = [_c("delete_event", event_id=event_id)]
    sim.run(calls)
    facts = [Fact(kind="id", value=event_id), Fact(kind="text", value="deleted")]
    return f"Delete calendar event {event_id}.", calls, facts, f"Event {event_id} deleted."


def c_cancel(rng: random.Random, sim: Simulator) -> Generated:
    day = (date(2024, 6, 3) + timedelta(days=rng.randint(0, 14))).isoformat()
    while not _events_on(day):  # a day with something to cancel
        day = (date(2024, 6, 3) + timedelta(days=rng.randint(0, 14))).isoformat()
    events = _events_on(day)
    target = rng.choice(events)
    calls = [_c("get_events", date=day), _c("delete_event", event_id=target["id"])]
    sim.run(calls)
    facts = [Fact(kind="id", value=target["id"]), Fact(kind="text", value="deleted")]
    return (
        f"Cancel my '{target['title']}' on {day}.",
        calls,
        facts,
        f"Deleted {target['id']} ('{target['title']}').",
    )


def c_add_and_list(rng: random.Random, sim: Simulator) -> Generated:
    day = (date(2024, 6, 3) + timedelta(days=rng.randint(0, 14))).isoformat()
    title = rng.choice(TITLES)
    calls = [
        _c("create_event", title=title, date=day, time="18:00", duration_minutes=30),
        _c("get_events", date=day),
    ]
    e, r = sim.run(calls)
    facts = [Fact(kind="id", value=e["event_id"]), Fact(kind="number", value=len(r["events"]))]
    return (f"Add '{title}' on {day} at 18:00 for 30 minutes, then tell me how many events that day has.", calls, facts,
            f"Created {e['event_id']}; {len(r['events'])} events that day.")  # fmt: skip


def c_branch(rng: random.Random, sim: Simulator) -> Generated:
    day = (date(2024, 6, 3) + timedelta(days=rng.randint(0, 14))).isoformat()
    wanted = f"{rng.randint(9, 16):02d}:{rng.choice(('00', '30'))}"
    taken = {e["time"] for e in _events_on(day)}
    time = (
        wanted
        if wanted not in taken
        else next(f"{h:02d}:00" for h in range(8, 20) if f"{h:02d}:00" not in taken)
    )
    title = rng.choice(TITLES)
    calls = [_c("get_events", date=day), _c("create_event", title=title, date=day, time=time, duration_minutes=30),
             _c("get_events", date=day)]  # fmt: skip
    _, e, after = sim.run(calls)
    facts = [
        Fact(kind="text", value=time),
        Fact(kind="id", value=e["event_id"]),
        Fact(kind="number", value=len(after["events"])),
    ]
    return (f"Book '{title}' on {day} at {wanted} for 30 minutes; if that slot is taken, use the first free whole hour from 08:00. "
            "Then tell me the time, the event id and how many events the day has.", calls, facts,
            f"Booked {e['event_id']} at {time}; {len(after['events'])} events that day.")  # fmt: skip


# -- medical -----------------------------------------------------------------------------------------------
def m_meds(rng: random.Random, sim: Simulator) -> Generated:
    pid = rng.choice(sorted(PATIENTS))
    calls = [_c("get_patient_record", patient_id=pid, fields=["medications"])]
    (r,) = sim.run(calls)
    facts = [Fact(kind="text", value=m) for m in r["medications"]]
    return f"What medications is patient {pid} taking?", calls, facts, ", ".join(r["medications"]) + "."


def _severity_of(a: str, b: str) -> str:
    return INTERACTIONS.get(frozenset({a, b}), "unknown")


def _pair(rng: random.Random) -> tuple[str, str]:
    """Two drugs whose interaction is drawn evenly over the severities (a random pair is almost always
    "unknown", so answering "unknown" without looking would pay)."""
    severity = rng.choice(SEVERITIES)
    pairs = sorted(tuple(sorted(p)) for p, v in INTERACTIONS.items() if v == severity) or [
        p for p in itertools.combinations(DRUGS, 2) if _severity_of(*p) == "unknown"
    ]
    a, b = rng.choice(pairs)
    return (a, b) if rng.random() < 0.5 else (b, a)


def _patient_and_partner(rng: random.Random) -> tuple[str, str]:
    """A patient and a drug to check against their first listed medication, the interaction drawn evenly
    over the severities (then a patient whose medication has a partner of that severity)."""
    severity = rng.choice(SEVERITIES)
    options = [
        (pid, d)
        for pid in sorted(PATIENTS)
        for d in DRUGS
        if d != PATIENTS[pid]["medications"][0]
        and _severity_of(PATIENTS[pid]["medications"][0], d) == severity
    ]
    return rng.choice(options)


#: ways of asking the interaction question (a known pair may be asked more than once)
INTERACTION_WORDINGS = (
    "Is there an interaction between {a} and {b}?",
    "Can {a} be taken together with {b}? Check their interaction.",
    "How severe is the interaction of {a} with {b}?",
)


def m_interaction(rng: random.Random, sim: Simulator) -> Generated:
    a, b = _pair(rng)
    calls = [_c("check_drug_interaction", drug_a=a, drug_b=b)]
    (r,) = sim.run(calls)
    facts = [Fact(kind="text", value=r["severity"])]
    query = rng.choice(INTERACTION_WORDINGS).format(a=a, b=b)
    return query, calls, facts, f"Severity: {r['severity']}."


def m_schedule(rng: random.Random, sim: Simulator) -> Generated:
    pid, doc, day = rng.choice(sorted(PATIENTS)), rng.choice(sorted(DOCTORS)), _day(rng, 2, 30)
    kind = rng.choice(("checkup", "follow_up", "specialist"))
    calls = [_c("schedule_appointment", patient_id=pid, doctor_id=doc, date=day, appointment_type=kind)]
    (r,) = sim.run(calls)
    facts = [Fact(kind="id", value=r["appointment_id"]), Fact(kind="date", value=day)]
    return (f"Book a {kind.replace('_', '-')} appointment for patient {pid} with doctor {doc} on {day}.", calls, facts,
            f"Booked {r['appointment_id']} on {day}.")  # fmt: skip


def m_own_meds(rng: random.Random, sim: Simulator) -> Generated:
    pid = rng.choice([p for p, v in PATIENTS.items() if len(v["medications"]) >= 2])
    (r,) = sim.run([_c("get_patient_record", patient_id=pid)])
    a, b = r["medications"][:2]
    calls = [_c("get_patient_record", patient_id=pid), _c("check_drug_interaction", drug_a=a, drug_b=b)]
    _, i = sim.run(calls)
    facts = [Fact(kind="text", value=a), Fact(kind="text", value=b), Fact(kind="text", value=i["severity"])]
    return (
        f"Do the two medications of patient {pid} interact?",
        calls,
        facts,
        f"{a} and {b}: {i['severity']}.",
    )


def m_new_drug(rng: random.Random, sim: Simulator) -> Generated:
    pid, new = _patient_and_partner(rng)
    (r,) = sim.run([_c("get_patient_record", patient_id=pid, fields=["medications"])])
    current = r["medications"][0]
    calls = [_c("get_patient_record", patient_id=pid, fields=["medications"]),
             _c("check_drug_interaction", drug_a=current, drug_b=new)]  # fmt: skip
    _, i = sim.run(calls)
    facts = [Fact(kind="text", value=current), Fact(kind="text", value=i["severity"])]
    query = rng.choice(NEW_DRUG_WORDINGS).format(pid=pid, new=new)
    return query, calls, facts, f"{current} with {new}: {i['severity']}."


NEW_DRUG_WORDINGS = (
    "Patient {pid} asks about taking {new}. Look up their first listed medication and check it against {new}.",
    "Could patient {pid} start {new}? Check {new} against the first medication on their record.",
    "Before prescribing {new} to patient {pid}, look up their first listed medication and check the interaction.",
)


def m_check_and_book(rng: random.Random, sim: Simulator) -> Generated:
    a, b = _pair(rng)
    pid, doc, day = rng.choice(sorted(PATIENTS)), rng.choice(sorted(DOCTORS)), _day(rng, 2, 30)
    calls = [_c("check_drug_interaction", drug_a=a, drug_b=b),
             _c("schedule_appointment", patient_id=pid, doctor_id=doc, date=day, appointment_type="follow_up")]  # fmt: skip
    i, appointment = sim.run(calls)
    facts = [Fact(kind="text", value=i["severity"]), Fact(kind="id", value=appointment["appointment_id"]),
             Fact(kind="date", value=day)]  # fmt: skip
    return (f"Check whether {a} and {b} interact, then book a follow-up for patient {pid} with doctor {doc} on {day}.",
            calls, facts, f"{a}+{b}: {i['severity']}; booked {appointment['appointment_id']} on {day}.")  # fmt: skip


def m_branch(rng: random.Random, sim: Simulator) -> Generated:
    (pid, new), day = _patient_and_partner(rng), _day(rng, 2, 30)
    (r,) = sim.run([_c("get_patient_record", patient_id=pid)])
    current = r["medications"][0]
    (i,) = sim.run([_c("check_drug_interaction", drug_a=current, drug_b=new)])
    kind, doc = ("specialist", "D002") if i["severity"] in ("moderate", "high") else ("checkup", "D001")
    calls = [_c("get_patient_record", patient_id=pid), _c("check_drug_interaction", drug_a=current, drug_b=new),
             _c("schedule_appointment", patient_id=pid, doctor_id=doc, date=day, appointment_type=kind)]  # fmt: skip
    _, _, a = sim.run(calls)
    facts = [
        Fact(kind="text", value=i["severity"]),
        Fact(kind="text", value=kind),
        Fact(kind="id", value=a["appointment_id"]),
    ]
    return (f"Patient {pid} may start {new}. Check it against their first listed medication; if the interaction is moderate "
            f"or high book a specialist appointment with D002 on {day}, otherwise a checkup with D001 on {day}.", calls, facts,
            f"{current}+{new}: {i['severity']}; booked {kind} {a['appointment_id']}.")  # fmt: skip


# -- knowledge -----------------------------------------------------------------------------------------------
def _fact_of(text: str) -> Fact:
    numbers = re.findall(r"\d+", text)
    if numbers:
        return Fact(kind="number", value=int(numbers[-1]))
    words = re.findall(r"[A-Z][a-z]+", text)
    return Fact(kind="text", value=words[-1])


def k_lookup(rng: random.Random, sim: Simulator) -> Generated:
    title, text = rng.choice(KNOWLEDGE)
    calls = [_c("search_knowledge", query=title)]
    (r,) = sim.run(calls)
    top = r["results"][0]
    return f"Look up: {title.lower()}?", calls, [_fact_of(top["text"])], top["text"]


def k_two(rng: random.Random, sim: Simulator) -> Generated:
    (t1, _), (t2, _) = rng.sample(KNOWLEDGE, 2)
    calls = [_c("search_knowledge", query=t1), _c("search_knowledge", query=t2)]
    r1, r2 = sim.run(calls)
    a, b = r1["results"][0]["text"], r2["results"][0]["text"]
    return f"Two questions: {t1.lower()}, and {t2.lower()}?", calls, [_fact_of(a), _fact_of(b)], f"{a} {b}"


# -- retail (held out) ----------------------------------------------------------------------------------------
def r_search(rng: random.Random, sim: Simulator) -> Generated:
    name, category, price = rng.choice(CATALOG)
    keyword = name.split()[-1]
    calls = [_c("search_products", query=keyword, category=category)]
    (r,) = sim.run(calls)
    facts = [Fact(kind="id", value=p["id"]) for p in r["results"]]
    return (
        f"Find {keyword.lower()} products in {category}: give their ids.",
        calls,
        facts,
        ", ".join(p["id"] for p in r["results"]),
    )


def r_budget(rng: random.Random, sim: Simulator) -> Generated:
    name, _, _ = rng.choice(CATALOG)
    keyword = name.split()[-1]
    cheapest = min(p for n, _, p in CATALOG if keyword.lower() in n.lower())
    budget = rng.randint(cheapest, cheapest + 250)
    calls = [_c("search_products", query=keyword, max_price=budget)]
    (r,) = sim.run(calls)
    facts = [Fact(kind="id", value=p["id"]) for p in r["results"]]
    return (f"Which {keyword.lower()} products cost at most ${budget}? Give their ids.", calls, facts,
            ", ".join(p["id"] for p in r["results"]))  # fmt: skip


def r_compare(rng: random.Random, sim: Simulator) -> Generated:
    a, b = rng.sample(sorted(base_state()["products"]), 2)
    calls = [_c("get_product", product_id=a), _c("get_product", product_id=b)]
    pa, pb = sim.run(calls)
    if pa["price"] == pb["price"]:
        return r_compare(rng, sim)
    cheaper = pa if pa["price"] < pb["price"] else pb
    # both prices, not their difference: a computed number is in no observation, so it would read as made up
    facts = [Fact(kind="id", value=cheaper["id"]), Fact(kind="number", value=pa["price"]),
             Fact(kind="number", value=pb["price"])]  # fmt: skip
    return (f"Which is cheaper, {a} or {b}? Give both prices.", calls, facts,
            f"{cheaper['id']} is cheaper: {a} costs {pa['price']}, {b} costs {pb['price']}.")  # fmt: skip


def r_stock(rng: random.Random, sim: Simulator) -> Generated:
    name, category, _ = rng.choice(CATALOG)
    keyword = name.split()[-1]
    (r,) = sim.run([_c("search_products", query=keyword)])
    cheapest = min(r["results"], key=lambda p: (p["price"], p["id"]))
    calls = [_c("search_products", query=keyword), _c("get_product", product_id=cheapest["id"])]
    _, p = sim.run(calls)
    facts = [Fact(kind="id", value=p["id"]), Fact(kind="number", value=p["stock"])]
    return (
        f"How many of the cheapest {keyword.lower()} are in stock?",
        calls,
        facts,
        f"{p['id']}: {p['stock']} in stock.",
    )


def r_order(rng: random.Random, sim: Simulator) -> Generated:
    name, _, price = rng.choice(CATALOG)
    keyword = name.split()[-1]
    quantity = rng.randint(1, 6)
    (r,) = sim.run([_c("search_products", query=keyword)])
    first = min(r["results"], key=lambda p: (p["price"], p["id"]))
    (p,) = sim.run([_c("get_product", product_id=first["id"])])
    quantity = min(quantity, p["stock"])
    address = f"{rng.randint(1, 99)} Harbour Road, Springfield"
    calls = [_c("search_products", query=keyword), _c("get_product", product_id=first["id"]),
             _c("place_order", product_id=first["id"], quantity=quantity, shipping_address=address)]  # fmt: skip
    *_, o = sim.run(calls)
    facts = [Fact(kind="id", value=o["order_id"]), Fact(kind="number", value=o["total"])]
    return (f"Order {quantity} of the cheapest {keyword.lower()} (no more than in stock) to {address}, and tell me the "
            "order id and total.", calls, facts, f"Order {o['order_id']}, total {o['total']}.")  # fmt: skip


TEMPLATES: dict[str, dict[str, tuple[Template, ...]]] = {
    "weather": {
        "easy": (w_current, w_forecast, w_history),
        "medium": (w_compare, w_change),
        "hard": (w_branch,),
    },
    "calendar": {
        "easy": (c_create, c_list, c_delete),
        "medium": (c_cancel, c_add_and_list),
        "hard": (c_branch,),
    },
    "medical": {
        "easy": (m_meds, m_interaction, m_schedule),
        "medium": (m_own_meds, m_new_drug, m_check_and_book),
        "hard": (m_branch,),
    },
    "knowledge": {"easy": (k_lookup,), "medium": (k_two,), "hard": ()},
    "retail": {"easy": (r_search, r_budget), "medium": (r_stock, r_compare), "hard": (r_order,)},
}
TOOLS = {
    "weather": ["get_weather", "get_forecast", "get_historical"],
    "calendar": ["create_event", "get_events", "delete_event"],
    "medical": ["get_patient_record", "check_drug_interaction", "schedule_appointment"],
    "knowledge": ["search_knowledge"],
    "retail": ["search_products", "get_product", "place_order"],
}


def generate(seed: int = 0, counts: dict[str, int] = COUNTS) -> list[AgentPropTask]:
    """Every task, deterministically from ``seed``. Templates take turns by difficulty; a query already
    drawn is redrawn, and a template whose distinct queries run out (200 redraws in a row) leaves the
    rotation, so small templates (five patients) never repeat a task."""
    sim = Simulator()
    out: list[AgentPropTask] = []
    state = InitialState(collections=base_state(), now=NOW)
    for domain, n in counts.items():
        rng = random.Random(f"{seed}:{domain}")
        rotation = [(lvl, t) for lvl in ("easy", "medium", "hard") for t in TEMPLATES[domain][lvl]]
        rotation = [rotation[i] for i in sorted(range(len(rotation)), key=lambda i: (i % 3, i))]
        seen: set[str] = set()
        misses = dict.fromkeys(range(len(rotation)), 0)
        k = turn = 0
        while k < n:
            live = [i for i in range(len(rotation)) if misses[i] < 200]
            if not live:
                raise ValueError(f"{domain}: only {k} distinct tasks, {n} asked")
            index = live[turn % len(live)]
            level, template = rotation[index]
            query, calls, facts, text = template(rng, sim)
            if query in seen:
                misses[index] += 1
                continue
            misses[index] = 0
            turn += 1
            seen.add(query)
            k += 1
            out.append(AgentPropTask(
                id=f"{domain}_{k:04d}", template_id=f"{domain}:{template.__name__}", benchmark="agentprop",
                domain=domain, instruction=query, initial_state=state, tools=[*TOOLS[domain], "final_answer", "abstain"],
                labels={"difficulty": level}, gold=[*calls, ToolCall(name="final_answer", arguments={"answer": text})],
                difficulty=level, reference=facts, reference_text=text, held_out=domain == "retail",
            ))  # fmt: skip
    return out


def render_tasks(tasks: list[AgentPropTask]) -> str:
    """The packaged file: tasks without their initial state (one world serves them all)."""
    rows = [t.model_dump(mode="json", exclude={"initial_state"}) for t in tasks]
    return (
        json.dumps({"seed_world": "base_state", "tasks": rows}, separators=(",", ":"), ensure_ascii=False)
        + "\n"
    )
