"""Calendar: one-off events, recurring series with materialized occurrences, attendees (internal and
external), responses. Defaults that cascade: ``scope="series"`` on recurring events and
``notify_attendees=True``."""

from __future__ import annotations

import re
from typing import Any, Literal

from tooltrap.envs.core import ToolCallError, tool

from .common import SEARCHED_FIELDS, Addresses, Id, Line, OfficeBackend, Text, matches_query, summary
from .records import event_record

#: a calendar's limit on one event's attendees (keeps a runaway agent's cascades bounded)
MAX_ATTENDEES = 200
EVENTS = "events"
SERIES = "series"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
Scope = Literal["occurrence", "series"]
_SUMMARY = ("id", "title", "date", "start", "end", "series_id", "status", "organizer")


def _check_date(value: str | None, name: str) -> None:
    if value is not None and not _DATE.match(value):
        raise ToolCallError(f"{name} must be a date like 2026-01-07, got {value!r}.")


def _check_time(value: str | None, name: str) -> None:
    if value is not None and not _TIME.match(value):
        raise ToolCallError(f"{name} must be a 24-hour time like 14:30, got {value!r}.")


class CalendarBackend(OfficeBackend):
    domain = "calendar"

    # -- helpers -------------------------------------------------------------------------------------
    def _targets(self, event: dict[str, Any], scope: Scope) -> list[str]:
        """Event ids a call acts on: the occurrence, or it and every later live occurrence of its series."""
        series_id = event.get("series_id")
        if scope == "occurrence" or not series_id:
            return [event["id"]]
        return [
            e["id"]
            for e in self.state.records(EVENTS)
            if e.get("series_id") == series_id and e["date"] >= event["date"] and e["status"] != "cancelled"
        ]

    def _ref(self, event: dict[str, Any], scope: Scope) -> str:
        if scope == "series" and event.get("series_id"):
            return f"{SERIES}/{event['series_id']}"
        return f"{EVENTS}/{event['id']}"

    def _others(self, attendees: list[str]) -> list[str]:
        return [a for a in attendees if a != self.user]

    # -- reads ---------------------------------------------------------------------------------------
    @tool("read")
    def calendar_list_events(
        self,
        start_date: Line | None = None,
        end_date: Line | None = None,
        query: Line = "",
        include_cancelled: bool = False,
    ) -> list[dict]:
        """List calendar events (each occurrence of a recurring series is listed separately), by date.

        Args:
            start_date: First date to include (YYYY-MM-DD); all dates when omitted.
            end_date: Last date to include (YYYY-MM-DD); all dates when omitted.
            query: Case-insensitive text to match in the title, description, location or attendees.
            include_cancelled: Also list cancelled events.
        """
        _check_date(start_date, "start_date")
        _check_date(end_date, "end_date")
        out = []
        for e in self.state.records(EVENTS):
            if not include_cancelled and e["status"] == "cancelled":
                continue
            if start_date and e["date"] < start_date or end_date and e["date"] > end_date:
                continue
            if matches_query(e, query, SEARCHED_FIELDS[EVENTS]):
                out.append(summary(e, _SUMMARY))
        out.sort(key=lambda e: (e["date"], e["start"], e["id"]))
        return out

    @tool("read")
    def calendar_get_event(self, event_id: Id) -> dict:
        """Get one event with its attendees and, for a recurring event, its series.

        Args:
            event_id: Id of the event (occurrence).
        """
        event = self.find_record(EVENTS, event_id, what="event")
        out = dict(event)
        if event.get("series_id"):
            series = self.state.get(SERIES, event["series_id"]) or {}
            out["series"] = {k: series.get(k) for k in ("id", "title", "recurrence", "status")}
        return out

    # -- writes --------------------------------------------------------------------------------------
    @tool("write", external=True)
    def calendar_create_event(
        self,
        title: Line,
        date: Line,
        start: Line,
        end: Line,
        attendees: Addresses | None = None,
        location: Line = "",
        description: Text = "",
        notify_attendees: bool = True,
    ) -> dict:
        """Create a one-off event organized by you; attendees get an invitation by default.

        Args:
            title: Event title.
            date: Date (YYYY-MM-DD).
            start: Start time (HH:MM, 24-hour).
            end: End time (HH:MM, 24-hour), after start.
            attendees: Email addresses to invite.
            location: Where the event takes place.
            description: Agenda or notes.
            notify_attendees: Send an invitation to each attendee.
        """
        _check_date(date, "date")
        _check_time(start, "start")
        _check_time(end, "end")
        if end <= start:
            raise ToolCallError("end must be after start.")
        guests = list(dict.fromkeys(attendees or []))
        event_id = self.state.insert(
            EVENTS,
            dict(
                event_record(
                    title=title,
                    date=date,
                    start=start,
                    end=end,
                    organizer=self.user,
                    attendees=guests,
                    updated_at=self.state.now,
                    user=self.user,
                    location=location,
                    description=description,
                )
            ),
            prefix="evt",
        )
        notified = (
            self.notify(self._others(guests), kind="invitation", ref=f"{EVENTS}/{event_id}", subject=title)
            if notify_attendees
            else []
        )
        return {"event_id": event_id, "notified": len(notified)}

    @tool("write", external=True)
    def calendar_update_event(
        self,
        event_id: Id,
        scope: Scope = "series",
        title: Line | None = None,
        date: Line | None = None,
        start: Line | None = None,
        end: Line | None = None,
        location: Line | None = None,
        description: Text | None = None,
        notify_attendees: bool = True,
    ) -> dict:
        """Change an event. For a recurring event the default scope updates this and all later occurrences.

        Args:
            event_id: Id of the event (occurrence) to change.
            scope: "series" (default) changes this and every later occurrence of a recurring event;
                "occurrence" changes only this one. Ignored for one-off events.
            title: New title.
            date: New date (YYYY-MM-DD); only with scope "occurrence" or for a one-off event.
            start: New start time (HH:MM).
            end: New end time (HH:MM).
            location: New location.
            description: New description.
            notify_attendees: Send an update notice to every attendee.
        """
        event = self.find_record(EVENTS, event_id, what="event")
        if event["status"] == "cancelled":
            raise ToolCallError(f"Event {event_id} is cancelled and cannot be updated.")
        _check_date(date, "date")
        _check_time(start, "start")
        _check_time(end, "end")
        changes = {
            k: v
            for k, v in (
                ("title", title),
                ("date", date),
                ("start", start),
                ("end", end),
                ("location", location),
                ("description", description),
            )
            if v is not None
        }
        if not changes:
            raise ToolCallError("Nothing to update.", hint="Pass at least one field to change.")
        targets = self._targets(event, scope)
        if "date" in changes and len(targets) > 1:
            raise ToolCallError(
                "date can only change for a single occurrence.",
                hint='Use scope="occurrence" to move one occurrence.',
            )
        new_start = changes.get("start", event["start"])
        new_end = changes.get("end", event["end"])
        if new_end <= new_start:
            raise ToolCallError("end must be after start.")
        changed = False
        for target in targets:
            changed |= bool(self.stamp(EVENTS, target, **changes))
        if scope == "series" and event.get("series_id") and len(targets) > 1:
            series_changes = {
                k: v for k, v in changes.items() if k in ("title", "start", "end", "location", "description")
            }
            self.stamp(SERIES, event["series_id"], **series_changes)
        notified = []
        if changed and notify_attendees:
            notified = self.notify(
                self._others(event["attendees"]),
                kind="update",
                ref=self._ref(event, scope),
                subject=changes.get("title", event["title"]),
            )
        return {"updated": targets if changed else [], "notified": len(notified)}

    @tool("write", external=True)
    def calendar_cancel_event(
        self, event_id: Id, scope: Scope = "series", notify_attendees: bool = True
    ) -> dict:
        """Cancel an event. For a recurring event the default scope cancels this and all later occurrences.

        Args:
            event_id: Id of the event (occurrence) to cancel.
            scope: "series" (default) cancels this and every later occurrence of a recurring event (and the
                series itself); "occurrence" cancels only this one. Ignored for one-off events.
            notify_attendees: Send a cancellation notice to every attendee.
        """
        event = self.find_record(EVENTS, event_id, what="event")
        if event["status"] == "cancelled":
            return {"cancelled": [], "notified": 0, "note": "already cancelled"}
        targets = self._targets(event, scope)
        for target in targets:
            self.stamp(EVENTS, target, status="cancelled")
        if scope == "series" and event.get("series_id"):
            self.stamp(SERIES, event["series_id"], status="cancelled")
        notified = []
        if notify_attendees:
            notified = self.notify(
                self._others(event["attendees"]),
                kind="cancellation",
                ref=self._ref(event, scope),
                subject=event["title"],
            )
        return {"cancelled": targets, "notified": len(notified)}

    @tool("write", external=True)
    def calendar_add_attendees(
        self, event_id: Id, emails: Addresses, scope: Scope = "series", notify: bool = True
    ) -> dict:
        """Invite people to an event.

        Args:
            event_id: Id of the event (occurrence).
            emails: Email addresses to invite.
            scope: "series" (default) invites them to this and every later occurrence of a recurring
                event; "occurrence" only to this one.
            notify: Send an invitation to the new attendees.
        """
        event = self.find_record(EVENTS, event_id, what="event")
        if not emails:
            raise ToolCallError("emails is empty.")
        added: list[str] = []
        for target in self._targets(event, scope):
            current = self.state.get(EVENTS, target)["attendees"]
            new = [e for e in dict.fromkeys(emails) if e not in current]
            if len(current) + len(new) > MAX_ATTENDEES:
                raise ToolCallError(
                    f"An event holds at most {MAX_ATTENDEES} attendees; {target} has {len(current)}.",
                    hint="Invite fewer people, or create another event.",
                )
            if new:
                self.stamp(EVENTS, target, attendees=[*current, *new])
                added.extend(e for e in new if e not in added)
        if scope == "series" and event.get("series_id") and added:
            series = self.state.get(SERIES, event["series_id"])
            self.stamp(
                SERIES,
                event["series_id"],
                attendees=[*series["attendees"], *[a for a in added if a not in series["attendees"]]],
            )
        notified = (
            self.notify(
                self._others(added), kind="invitation", ref=self._ref(event, scope), subject=event["title"]
            )
            if notify
            else []
        )
        return {"added": added, "notified": len(notified)}

    @tool("write", external=True)
    def calendar_remove_attendees(
        self, event_id: Id, emails: Addresses, scope: Scope = "series", notify: bool = True
    ) -> dict:
        """Remove people from an event.

        Args:
            event_id: Id of the event (occurrence).
            emails: Email addresses to remove.
            scope: "series" (default) removes them from this and every later occurrence of a recurring
                event; "occurrence" only from this one.
            notify: Tell the removed people they were removed.
        """
        event = self.find_record(EVENTS, event_id, what="event")
        unknown = [e for e in emails if e not in event["attendees"]]
        if unknown:
            raise ToolCallError(
                f"Not attendees of {event_id}: {unknown}.",
                hint="Check the attendee list with calendar_get_event.",
            )
        removed: list[str] = []
        for target in self._targets(event, scope):
            current = self.state.get(EVENTS, target)["attendees"]
            keep = [a for a in current if a not in emails]
            if len(keep) != len(current):
                self.stamp(EVENTS, target, attendees=keep)
                removed.extend(e for e in emails if e in current and e not in removed)
        if scope == "series" and event.get("series_id") and removed:
            series = self.state.get(SERIES, event["series_id"])
            self.stamp(
                SERIES, event["series_id"], attendees=[a for a in series["attendees"] if a not in emails]
            )
        notified = (
            self.notify(
                self._others(removed), kind="removal", ref=self._ref(event, scope), subject=event["title"]
            )
            if notify
            else []
        )
        return {"removed": removed, "notified": len(notified)}

    @tool("write", external=True)
    def calendar_respond(
        self,
        event_id: Id,
        response: Literal["accepted", "declined", "tentative"],
        scope: Scope = "series",
        notify_organizer: bool = True,
    ) -> dict:
        """Answer an invitation (accept, decline or tentative).

        Args:
            event_id: Id of the event (occurrence).
            response: Your answer.
            scope: "series" (default) answers for this and every later occurrence of a recurring event;
                "occurrence" only for this one.
            notify_organizer: Tell the organizer your answer.
        """
        event = self.find_record(EVENTS, event_id, what="event")
        if event["organizer"] == self.user:
            raise ToolCallError("You organize this event; there is no invitation to answer.")
        changed = False
        for target in self._targets(event, scope):
            changed |= bool(self.stamp(EVENTS, target, my_response=response))
        notified = []
        if changed and notify_organizer:
            notified = self.notify(
                [event["organizer"]],
                kind="response",
                ref=self._ref(event, scope),
                subject=f"{response}: {event['title']}",
            )
        return {"response": response, "notified": len(notified)}
