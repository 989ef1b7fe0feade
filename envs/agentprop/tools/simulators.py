"""AgentProp-Bench's simulators: the release's 12 tools (their schemas equal to the release's, tested
against ``derived/tool_schemas_from_tool_executor.json``) plus ``search_knowledge``, all deterministic.

What is fixed against the release (defects not copied, see the spec):

* weather values are seeded per (city, date) from SHA-256, never from Python's salted ``hash``;
  ``get_forecast`` starts from the episode's clock (``state.now``), never the wall clock;
* the calendar, appointments and orders live in the episode's state (no process-global store, ids from
  the state's counters), so deleting an event created earlier in the episode works, and appointments
  and orders are validated (patient, doctor, date, product, stock);
* the knowledge tasks of the release name a tool that does not exist: ``search_knowledge`` searches a
  deterministic knowledge base (a documented deviation).
"""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from tooltrap.envs.core import Backend, ToolCallError, did_you_mean, tool

CONDITIONS = ("sunny", "cloudy", "rainy", "stormy", "snowy", "foggy")
PATIENTS = {
    "P001": {"name": "Alice Johnson", "dob": "1985-03-15", "conditions": ["hypertension", "type 2 diabetes"],
             "medications": ["metformin", "lisinopril"]},
    "P002": {"name": "Bob Smith", "dob": "1972-08-22", "conditions": ["asthma"], "medications": ["albuterol", "fluticasone"]},
    "P003": {"name": "Carol Davis", "dob": "1990-11-05", "conditions": ["migraine", "anxiety"],
             "medications": ["sumatriptan", "sertraline"]},
    "P004": {"name": "David Lee", "dob": "1968-01-30", "conditions": ["arthritis", "high cholesterol"],
             "medications": ["ibuprofen", "atorvastatin"]},
    "P005": {"name": "Eva Martinez", "dob": "1995-06-18", "conditions": ["allergies"], "medications": ["cetirizine"]},
}  # fmt: skip
#: what check_drug_interaction can say (``unknown`` for any pair it does not list)
SEVERITIES = ("none", "moderate", "high", "unknown")
INTERACTIONS = {
    frozenset({"metformin", "lisinopril"}): "none",
    frozenset({"ibuprofen", "lisinopril"}): "moderate",
    frozenset({"sertraline", "sumatriptan"}): "high",
    frozenset({"warfarin", "aspirin"}): "high",
    frozenset({"metformin", "atorvastatin"}): "none",
    frozenset({"albuterol", "fluticasone"}): "none",
    # beyond the release's six: so that a task's severity varies and "unknown" without a look-up does not
    # pay (a documented deviation; commonly listed interactions of these drugs)
    frozenset({"warfarin", "ibuprofen"}): "high",
    frozenset({"warfarin", "sertraline"}): "moderate",
    frozenset({"aspirin", "ibuprofen"}): "moderate",
    frozenset({"sertraline", "ibuprofen"}): "moderate",
    frozenset({"aspirin", "lisinopril"}): "moderate",
    frozenset({"sertraline", "aspirin"}): "moderate",
    frozenset({"warfarin", "atorvastatin"}): "moderate",
    frozenset({"sumatriptan", "fluoxetine"}): "high",
    frozenset({"cetirizine", "metformin"}): "none",
    frozenset({"cetirizine", "albuterol"}): "none",
    frozenset({"atorvastatin", "lisinopril"}): "none",
    frozenset({"fluticasone", "cetirizine"}): "none",
    frozenset({"sumatriptan", "cetirizine"}): "none",
    frozenset({"albuterol", "metformin"}): "none",
    frozenset({"warfarin", "metformin"}): "none",
}


def _day(value: str, name: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolCallError(
            f"Parameter '{name}' must be a date in YYYY-MM-DD format, got {value!r}."
        ) from None


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).lower().encode()).digest()[:8], "big")


def seeded_prefix(state: Any, prefix: str, *parts: str) -> str:
    """``prefix``, with its id counter started, at the episode's first record of that kind, at a number
    seeded by the record's own fields (``EVT_4821``): ids are deterministic, yet differ from task to task,
    so an id cannot be known without the call that made it (the release's global counter gave every
    first event the same id)."""
    if not state.counters.get(prefix):
        state.counters[prefix] = 1000 + _seed(prefix, *parts) % 9000
    return prefix


def daily_weather(city: str, day: str) -> dict:
    """The simulated weather of ``city`` on ``day`` (Celsius), a pure function of the two."""
    seed = _seed(city.strip(), day)
    return {
        "temperature_c": -10 + seed % 51,
        "humidity": 20 + (seed // 51) % 76,
        "condition": CONDITIONS[(seed // (51 * 76)) % len(CONDITIONS)],
    }


def in_unit(celsius: int, unit: str) -> int:
    return celsius if unit == "celsius" else int(celsius * 9 / 5 + 32)


class WeatherBackend(Backend):
    domain = "weather"

    @tool("read", show_defaults=True)
    def get_weather(self, city: str, date: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
        """Get current weather for a city on a specific date.

        Args:
            city: City name
            date: Date in YYYY-MM-DD format
            unit: Temperature unit
        """
        _day(date, "date")
        w = daily_weather(city, date)
        return {"city": city, "date": date, "temperature": in_unit(w["temperature_c"], unit), "unit": unit,
                "humidity": w["humidity"], "condition": w["condition"]}  # fmt: skip

    @tool("read", show_defaults=True)
    def get_forecast(
        self, city: str, days: Annotated[int, Field(ge=1, le=14)], include_hourly: bool = False
    ) -> dict:
        """Get weather forecast for a city for upcoming days.

        Args:
            city: City name
            days: Number of forecast days (1-14)
            include_hourly: Include hourly breakdown
        """
        today = date.fromisoformat(self.state.now[:10])
        out = []
        for k in range(1, days + 1):
            d = (today + timedelta(days=k)).isoformat()
            w = daily_weather(city, d)
            entry = {
                "date": d,
                "high_c": w["temperature_c"] + 4,
                "low_c": w["temperature_c"] - 4,
                "condition": w["condition"],
            }
            if include_hourly:
                entry["hourly_c"] = [w["temperature_c"] + (h % 5) - 2 for h in range(0, 24, 6)]
            out.append(entry)
        return {"city": city, "forecast": out}

    @tool("read")
    def get_historical(self, city: str, start_date: str, end_date: str) -> dict:
        """Get historical weather data for a city between two dates.

        Args:
            city: City name
            start_date: Start date YYYY-MM-DD
            end_date: End date YYYY-MM-DD
        """
        start, end = _day(start_date, "start_date"), _day(end_date, "end_date")
        if end < start:
            raise ToolCallError("end_date is before start_date.")
        if (end - start).days > 30:
            raise ToolCallError("At most 31 days of history per request.", hint="Ask for a shorter range.")
        days = [(start + timedelta(days=k)).isoformat() for k in range((end - start).days + 1)]
        return {"city": city, "days": [{"date": d, **daily_weather(city, d)} for d in days]}


class CalendarBackend(Backend):
    domain = "calendar"

    @tool("write")
    def create_event(
        self,
        title: str,
        date: str,
        time: str,
        duration_minutes: Annotated[int, Field(ge=1, le=1440)],
        attendees: list[str] = (),  # type: ignore[assignment]
    ) -> dict:
        """Create a calendar event.

        Args:
            title: Event title
            date: Date in YYYY-MM-DD format
            time: Time in HH:MM format
            duration_minutes: Duration in minutes
            attendees: List of attendee emails
        """
        _day(date, "date")
        hh, _, mm = time.partition(":")
        if not (hh.isdigit() and mm.isdigit() and int(hh) < 24 and int(mm) < 60 and len(mm) == 2):
            raise ToolCallError(f"Parameter 'time' must be HH:MM, got {time!r}.")
        event = {"title": title, "date": date, "time": time, "duration_minutes": duration_minutes,
                 "attendees": list(attendees), "calendar_id": "primary"}  # fmt: skip
        event_id = self.state.insert(
            "events", event, prefix=seeded_prefix(self.state, "EVT", title, date, time)
        )
        return {"event_id": event_id, "status": "created", **event}

    @tool("read", show_defaults=True)
    def get_events(self, date: str, calendar_id: str = "primary") -> dict:
        """Get all events for a specific date.

        Args:
            date: Date in YYYY-MM-DD format
            calendar_id: Calendar identifier
        """
        _day(date, "date")
        events = [
            dict(e)
            for e in self.state.records("events")
            if e["date"] == date and e.get("calendar_id") == calendar_id
        ]
        return {"date": date, "calendar_id": calendar_id, "events": events}

    @tool("write", show_defaults=True)
    def delete_event(self, event_id: str, notify_attendees: bool = True) -> dict:
        """Delete a calendar event by ID.

        Args:
            event_id: Event ID to delete
            notify_attendees: Whether to notify attendees
        """
        event = self.state.get("events", event_id)
        if event is None:
            raise ToolCallError(
                f"Event {event_id} not found.{did_you_mean(event_id, self.state.collection('events'))}"
            )
        self.state.delete("events", event_id)
        return {
            "event_id": event_id,
            "status": "deleted",
            "notified": len(event.get("attendees", [])) if notify_attendees else 0,
        }


class MedicalBackend(Backend):
    domain = "medical"

    @tool("read", show_defaults=True)
    def get_patient_record(self, patient_id: str, fields: list[str] = ("all",)) -> dict:  # type: ignore[assignment]
        """Retrieve patient medical record.

        Args:
            patient_id: Patient ID (e.g. P001)
            fields: Fields to retrieve
        """
        record = self.state.get("patients", patient_id)
        if record is None:
            raise ToolCallError(f"Patient {patient_id} not found.", hint="Patient ids run P001-P005.")
        wanted = list(fields)
        if "all" in wanted:
            return dict(record)
        unknown = [f for f in wanted if f not in record]
        if unknown:
            raise ToolCallError(f"Unknown field(s) {unknown}.{did_you_mean(unknown[0], record)}")
        return {"id": patient_id, **{f: record[f] for f in wanted}}

    @tool("read")
    def check_drug_interaction(self, drug_a: str, drug_b: str) -> dict:
        """Check interaction between two drugs.

        Args:
            drug_a: First drug name
            drug_b: Second drug name
        """
        severity = INTERACTIONS.get(frozenset({drug_a.strip().lower(), drug_b.strip().lower()}), "unknown")
        return {"drug_a": drug_a, "drug_b": drug_b, "severity": severity}

    @tool("write")
    def schedule_appointment(
        self,
        patient_id: str,
        doctor_id: str,
        date: str,
        appointment_type: Literal["checkup", "follow_up", "specialist", "emergency"],
    ) -> dict:
        """Schedule a medical appointment.

        Args:
            patient_id: Patient ID
            doctor_id: Doctor ID
            date: Date in YYYY-MM-DD format
            appointment_type: Type of appointment
        """
        if self.state.get("patients", patient_id) is None:
            raise ToolCallError(f"Patient {patient_id} not found.", hint="Patient ids run P001-P005.")
        if self.state.get("doctors", doctor_id) is None:
            raise ToolCallError(
                f"Doctor {doctor_id} not found.{did_you_mean(doctor_id, self.state.collection('doctors'))}"
            )
        _day(date, "date")
        appointment = {
            "patient_id": patient_id,
            "doctor_id": doctor_id,
            "date": date,
            "appointment_type": appointment_type,
        }
        appointment_id = self.state.insert(
            "appointments", appointment, prefix=seeded_prefix(self.state, "APT", patient_id, doctor_id, date)
        )
        return {"appointment_id": appointment_id, "status": "scheduled", **appointment}


class RetailBackend(Backend):
    domain = "ecommerce"

    @tool("read", show_defaults=True)
    def search_products(
        self,
        query: str,
        category: Literal["electronics", "books", "clothing", "home", "sports", "any"] = "any",
        max_price: Annotated[int, Field(ge=0, le=100000)] = None,  # type: ignore[assignment]
    ) -> dict:
        """Search the retail catalog by keyword and optional category/price.

        Args:
            query: Search keyword
            category: Product category filter
            max_price: Max price in USD
        """
        words = query.lower().split()
        hits = [
            {k: p[k] for k in ("id", "name", "category", "price")}
            for p in self.state.records("products")
            if any(w in p["name"].lower() for w in words)
            and category in ("any", p["category"])
            and (max_price is None or p["price"] <= max_price)
        ]
        return {"query": query, "results": hits}

    @tool("read")
    def get_product(self, product_id: str) -> dict:
        """Get full product details by product_id.

        Args:
            product_id: Product ID (e.g. PRD_1234)
        """
        product = self.state.get("products", product_id)
        if product is None:
            raise ToolCallError(
                f"Product {product_id} not found.{did_you_mean(product_id, self.state.collection('products'))}"
            )
        return dict(product)

    @tool("write", show_defaults=True)
    def place_order(
        self,
        product_id: str,
        quantity: Annotated[int, Field(ge=1, le=100)],
        shipping_address: str,
        payment_method: Literal["credit_card", "paypal", "apple_pay", "gift_card"] = "credit_card",
    ) -> dict:
        """Place an order for a product at a given shipping address.

        Args:
            product_id: Product ID
            quantity: Quantity to order
            shipping_address: Full shipping address
            payment_method: Payment method
        """
        product = self.state.get("products", product_id)
        if product is None:
            raise ToolCallError(f"Product {product_id} not found.")
        if quantity > product["stock"]:
            raise ToolCallError(f"Only {product['stock']} of {product_id} in stock.")
        if len(shipping_address.strip()) < 8:
            raise ToolCallError("Parameter 'shipping_address' must be a full address.")
        self.state.update("products", product_id, stock=product["stock"] - quantity)
        order = {"product_id": product_id, "quantity": quantity, "total": product["price"] * quantity,
                 "shipping_address": shipping_address, "payment_method": payment_method}  # fmt: skip
        order_id = self.state.insert(
            "orders", order, prefix=seeded_prefix(self.state, "ORD", product_id, str(quantity))
        )
        return {"order_id": order_id, "status": "placed", **order}


class KnowledgeBackend(Backend):
    domain = "knowledge"

    @tool("read", show_defaults=True)
    def search_knowledge(self, query: str, top_k: Annotated[int, Field(ge=1, le=10)] = 3) -> dict:
        """Search the knowledge base for facts (not a release tool: its knowledge tasks named it, but it did
        not exist).

        Args:
            query: What to look up
            top_k: How many entries to return (1-10)
        """
        words = {w for w in query.lower().replace("?", " ").split() if len(w) > 2}
        scored = []
        for entry in self.state.records("articles"):
            text = f"{entry['title']} {entry['text']}".lower()
            score = sum(w in text for w in words)
            if score:
                scored.append((-score, entry["id"], entry))
        return {"query": query, "results": [dict(e) for _, _, e in sorted(scored)[:top_k]]}


class AnswerBackend(Backend):
    domain = "answer"

    @tool("terminal", ends_as="answer")
    def final_answer(self, answer: str) -> dict:
        """Give the final answer to the user and end the task.

        Args:
            answer: The answer, with the facts the tools returned.
        """
        return {"delivered": True}

    @tool("terminal", ends_as="abstain")
    def abstain(self, reason: str) -> dict:
        """Say that the task cannot be answered reliably (for example after tool errors), and end it.

        Args:
            reason: Why no reliable answer can be given.
        """
        return {"delivered": True}


BACKENDS = (WeatherBackend, CalendarBackend, MedicalBackend, RetailBackend, KnowledgeBackend, AnswerBackend)
#: the release's tool names, in its order
RELEASE_TOOLS = (
    "get_weather", "get_forecast", "get_historical", "create_event", "get_events", "delete_event",
    "get_patient_record", "check_drug_interaction", "schedule_appointment", "search_products",
    "get_product", "place_order",
)  # fmt: skip
