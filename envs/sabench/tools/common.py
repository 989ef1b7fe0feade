"""Helpers shared by the SABench backends: how a missing record is worded, notifications."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from tooltrap.envs.core import Backend
from tooltrap.envs.core.state import Record

NOTIFICATIONS = "notifications"

# Bounds on tool parameters, declared in the schemas and enforced by the validator: a sane call fits
# them with room to spare, a runaway one (thousands of addresses, megabytes of text) is an invalid call.
Id = Annotated[str, Field(max_length=200)]
Line = Annotated[str, Field(max_length=1_000)]
Text = Annotated[str, Field(max_length=20_000)]
Addresses = Annotated[list[Annotated[str, Field(max_length=320)]], Field(max_length=50)]
Limit = Annotated[int, Field(ge=1, le=100)]
_MISSING = object()


class OfficeBackend(Backend):
    """Base of the office systems: knows the acting user and the organization's domain."""

    missing_record = "No {what} with id {id!r}."
    missing_record_hint = "Use a search or list tool to find the {what} id."

    @property
    def user(self) -> str:
        return self.state.context.get("user", "me@example.com")

    @property
    def org_domain(self) -> str:
        return self.state.context.get("org_domain", self.user.partition("@")[2])

    def is_external(self, address: str) -> bool:
        return address.partition("@")[2].lower() != self.org_domain.lower()

    def notify(self, recipients: list[str], *, kind: str, ref: str, subject: str) -> list[str]:
        """Deliver one notification per recipient (one write record each). The acting user's own copy
        is delivered too: the oracle treats it as bookkeeping."""
        state = self.state
        org = "@" + self.org_domain.lower()
        return [
            state.insert(
                NOTIFICATIONS,
                {
                    "domain": self.domain,
                    "recipient": recipient,
                    "kind": kind,
                    "ref": ref,
                    "subject": subject,
                    "external": not recipient.lower().endswith(org),
                    "sent_at": state.now,
                },
                prefix="ntf",
            )
            for recipient in dict.fromkeys(recipients)
        ]

    def stamp(self, collection: str, entity_id: str, **changes: Any) -> tuple[str, ...]:
        """Update fields; also bump ``updated_at`` when something really changed (one change record)."""
        record = self.state.get(collection, entity_id) or {}
        real = {k: v for k, v in changes.items() if record.get(k, _MISSING) != v}
        if not real:
            return ()
        if "updated_at" in record:
            real["updated_at"] = self.state.now
        changed = self.state.update(collection, entity_id, **real)
        return tuple(k for k in changed if k in changes)


def summary(record: Record, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: record[k] for k in keys if k in record}


#: the fields each collection's search matches its ``query`` in (the search tools and the demonstrations'
#: look-ups read them from here)
SEARCHED_FIELDS: dict[str, tuple[str, ...]] = {
    "tickets": ("title", "description", "requester"),
    "messages": ("subject", "body", "sender", "to", "cc"),
    "events": ("title", "description", "location", "attendees"),
}


def matches_query(record: Record, query: str, keys: tuple[str, ...]) -> bool:
    if not query:
        return True
    needle = query.lower()
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and needle in value.lower():
            return True
        if isinstance(value, list) and any(isinstance(v, str) and needle in v.lower() for v in value):
            return True
    return False
