"""One typed builder per SABench entity, shared by the tools that create entities and by the
template :class:`~tooltrap.envs.sabench.authoring.templates.base.World` that builds initial states, so a record
has one shape whoever makes it. Builders return the record without its ``id`` (the state or the
template assigns it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict


class EventRecord(TypedDict):
    series_id: str | None
    title: str
    date: str
    start: str
    end: str
    organizer: str
    attendees: list[str]
    location: str
    description: str
    status: str
    my_response: str
    links: list[dict[str, str]]
    updated_at: str


class MessageRecord(TypedDict):
    thread_id: str | None
    folder: str
    sender: str
    to: list[str]
    cc: list[str]
    subject: str
    body: str
    date: str
    labels: list[str]
    read: bool
    in_reply_to: str | None


class TicketRecord(TypedDict):
    title: str
    description: str
    status: str
    priority: str
    assignee: str | None
    requester: str
    parent_id: str | None
    duplicate_of: str | None
    links: list[dict[str, str]]
    updated_at: str


class CommentRecord(TypedDict):
    ticket_id: str
    author: str
    body: str
    visibility: str
    date: str


def attendee_list(organizer: str, attendees: Sequence[str], user: str) -> list[str]:
    """The organizer first, then the attendees, then the user, each once."""
    return list(dict.fromkeys([organizer, *attendees, user]))


def event_record(
    *,
    title: str,
    date: str,
    start: str,
    end: str,
    organizer: str,
    attendees: Sequence[str],
    updated_at: str,
    user: str,
    location: str = "",
    description: str = "",
    series_id: str | None = None,
    status: str = "confirmed",
    my_response: str | None = None,
    links: Sequence[dict[str, str]] = (),
) -> EventRecord:
    """A calendar event; the user is always among the attendees, and accepted their own events."""
    return {
        "series_id": series_id,
        "title": title,
        "date": date,
        "start": start,
        "end": end,
        "organizer": organizer,
        "attendees": attendee_list(organizer, attendees, user),
        "location": location,
        "description": description,
        "status": status,
        "my_response": my_response or ("accepted" if organizer == user else "needs_action"),
        "links": list(links),
        "updated_at": updated_at,
    }


def message_record(
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    body: str,
    date: str,
    thread_id: str | None,
    cc: Sequence[str] = (),
    folder: str = "inbox",
    labels: Sequence[str] = (),
    read: bool = False,
    in_reply_to: str | None = None,
) -> MessageRecord:
    """An email message (``thread_id`` None: the message starts its own thread, named once it has an id)."""
    return {
        "thread_id": thread_id,
        "folder": folder,
        "sender": sender,
        "to": list(to),
        "cc": list(cc),
        "subject": subject,
        "body": body,
        "date": date,
        "labels": list(labels),
        "read": read,
        "in_reply_to": in_reply_to,
    }


def ticket_record(
    *,
    title: str,
    description: str,
    requester: str,
    updated_at: str,
    status: str = "open",
    priority: str = "medium",
    assignee: str | None = None,
    parent_id: str | None = None,
    duplicate_of: str | None = None,
    links: Sequence[dict[str, str]] = (),
) -> TicketRecord:
    """A ticket."""
    return {
        "title": title,
        "description": description,
        "status": status,
        "priority": priority,
        "assignee": assignee,
        "requester": requester,
        "parent_id": parent_id,
        "duplicate_of": duplicate_of,
        "links": list(links),
        "updated_at": updated_at,
    }


def comment_record(*, ticket_id: str, author: str, body: str, visibility: str, date: str) -> CommentRecord:
    """A comment on a ticket (``internal``: staff only; ``public``: the requester sees it)."""
    return {"ticket_id": ticket_id, "author": author, "body": body, "visibility": visibility, "date": date}


def with_id(entity_id: str, record: Any) -> dict[str, Any]:
    """``record`` with its ``id`` first (the layout of the packaged task files)."""
    return {"id": entity_id, **record}
