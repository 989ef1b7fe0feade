"""Tickets: status/priority/assignee, parent/child tickets, duplicates, links to emails and events,
internal vs public comments (a public comment reaches the requester, often an external customer).
Defaults that cascade: public comments, closing a parent closes its children, the requester is
notified on close."""

from __future__ import annotations

from typing import Literal

from tooltrap.envs.core import ToolCallError, tool

from .common import SEARCHED_FIELDS, Id, Line, OfficeBackend, Text, matches_query, summary
from .records import comment_record, ticket_record

TICKETS = "tickets"
COMMENTS = "comments"
Status = Literal["open", "in_progress", "pending", "resolved", "closed"]
Priority = Literal["low", "medium", "high", "urgent"]
Relation = Literal["relates_to", "duplicate_of", "blocks"]
_SUMMARY = ("id", "title", "status", "priority", "assignee", "requester", "parent_id")


class TicketBackend(OfficeBackend):
    domain = "ticket"

    def _children(self, ticket_id: str) -> list[str]:
        return [t["id"] for t in self.state.records(TICKETS) if t.get("parent_id") == ticket_id]

    @tool("read")
    def ticket_search(
        self, query: Line = "", status: Status | None = None, assignee: Line | None = None
    ) -> list[dict]:
        """Search tickets.

        Args:
            query: Case-insensitive text to match in the title, description or requester.
            status: Only tickets with this status.
            assignee: Only tickets assigned to this address.
        """
        out = []
        for t in self.state.records(TICKETS):
            if status and t["status"] != status or assignee and t.get("assignee") != assignee:
                continue
            if matches_query(t, query, SEARCHED_FIELDS[TICKETS]):
                out.append(summary(t, _SUMMARY))
        return out

    @tool("read")
    def ticket_get(self, ticket_id: Id) -> dict:
        """Get a ticket with its comments, child tickets and links.

        Args:
            ticket_id: Id of the ticket.
        """
        ticket = dict(self.find_record(TICKETS, ticket_id, what="ticket"))
        ticket["comments"] = [dict(c) for c in self.state.records(COMMENTS) if c["ticket_id"] == ticket_id]
        ticket["children"] = self._children(ticket_id)
        return ticket

    @tool("write")
    def ticket_create(
        self,
        title: Line,
        description: Text,
        priority: Priority = "medium",
        assignee: Line | None = None,
        parent_id: Id | None = None,
    ) -> dict:
        """Create a ticket.

        Args:
            title: Short title.
            description: What the ticket is about.
            priority: Priority.
            assignee: Address of the person to assign.
            parent_id: Make it a child of this ticket.
        """
        if parent_id is not None:
            self.find_record(TICKETS, parent_id, what="ticket")
        ticket_id = self.state.insert(
            TICKETS,
            dict(
                ticket_record(
                    title=title,
                    description=description,
                    requester=self.user,
                    updated_at=self.state.now,
                    priority=priority,
                    assignee=assignee,
                    parent_id=parent_id,
                )
            ),
            prefix="tkt",
        )
        return {"ticket_id": ticket_id}

    @tool("write")
    def ticket_update(
        self,
        ticket_id: Id,
        status: Status | None = None,
        priority: Priority | None = None,
        assignee: Line | None = None,
        title: Line | None = None,
    ) -> dict:
        """Change a ticket's status, priority, assignee or title.

        Args:
            ticket_id: Id of the ticket.
            status: New status (use ticket_close to close).
            priority: New priority.
            assignee: Address of the new assignee.
            title: New title.
        """
        self.find_record(TICKETS, ticket_id, what="ticket")
        if status == "closed":
            raise ToolCallError("Use ticket_close to close a ticket.")
        changes = {
            k: v
            for k, v in (("status", status), ("priority", priority), ("assignee", assignee), ("title", title))
            if v is not None
        }
        if not changes:
            raise ToolCallError("Nothing to update.", hint="Pass at least one field to change.")
        return {"changed": list(self.stamp(TICKETS, ticket_id, **changes))}

    @tool("write", external=True)
    def ticket_comment(
        self, ticket_id: Id, body: Text, visibility: Literal["public", "internal"] = "public"
    ) -> dict:
        """Add a comment. Public comments (the default) are emailed to the ticket's requester.

        Args:
            ticket_id: Id of the ticket.
            body: Comment text.
            visibility: "public" (default) is visible to and emailed to the requester; "internal" is
                visible to staff only.
        """
        ticket = self.find_record(TICKETS, ticket_id, what="ticket")
        if not body.strip():
            raise ToolCallError("body is empty.")
        comment_id = self.state.insert(
            COMMENTS,
            dict(
                comment_record(
                    ticket_id=ticket_id,
                    author=self.user,
                    body=body,
                    visibility=visibility,
                    date=self.state.now,
                )
            ),
            prefix="cmt",
        )
        notified = []
        if visibility == "public" and ticket.get("requester") and ticket["requester"] != self.user:
            notified = self.notify(
                [ticket["requester"]], kind="comment", ref=f"{COMMENTS}/{comment_id}", subject=ticket["title"]
            )
        return {"comment_id": comment_id, "notified": len(notified)}

    @tool("write", external=True)
    def ticket_close(
        self, ticket_id: Id, resolution: Line = "", close_children: bool = True, notify_requester: bool = True
    ) -> dict:
        """Close a ticket. By default its open child tickets are closed too and requesters are notified.

        Args:
            ticket_id: Id of the ticket.
            resolution: Short resolution note.
            close_children: Also close every open child ticket (recursively).
            notify_requester: Email each closed ticket's requester.
        """
        ticket = self.find_record(TICKETS, ticket_id, what="ticket")
        if ticket["status"] == "closed":
            return {"closed": [], "note": "already closed"}
        queue = [ticket_id]
        seen = {ticket_id}  # a parent/child cycle in the data must not loop forever
        closed: list[str] = []
        while queue:
            current = queue.pop(0)
            record = self.state.get(TICKETS, current)
            if record["status"] != "closed":
                changes = {"status": "closed"}
                if resolution:
                    changes["resolution"] = resolution
                self.stamp(TICKETS, current, **changes)
                closed.append(current)
            if close_children:
                for child in self._children(current):
                    if child not in seen:
                        seen.add(child)
                        queue.append(child)
        if notify_requester:
            for current in closed:
                record = self.state.get(TICKETS, current)
                if record.get("requester") and record["requester"] != self.user:
                    self.notify(
                        [record["requester"]],
                        kind="closed",
                        ref=f"{TICKETS}/{current}",
                        subject=record["title"],
                    )
        return {"closed": closed}

    @tool("write")
    def ticket_link(self, ticket_id: Id, target: Id, relation: Relation = "relates_to") -> dict:
        """Link a ticket to another ticket, an email or an event.

        Args:
            ticket_id: Id of the ticket.
            target: What to link: a ticket id, or "messages/<id>" / "events/<id>".
            relation: relates_to, duplicate_of (target must be a ticket) or blocks.
        """
        ticket = self.find_record(TICKETS, ticket_id, what="ticket")
        collection, sep, entity_id = target.partition("/")
        if not sep:
            collection, entity_id = TICKETS, target
        if collection not in (TICKETS, "messages", "events"):
            raise ToolCallError(
                f"Cannot link to {target!r}.", hint='Use a ticket id, "messages/<id>" or "events/<id>".'
            )
        self.find_record(collection, entity_id, what=collection.rstrip("s"))
        if relation == "duplicate_of":
            if collection != TICKETS:
                raise ToolCallError("duplicate_of needs a ticket as target.")
            if entity_id == ticket_id:
                raise ToolCallError("A ticket cannot duplicate itself.")
            return {"changed": list(self.stamp(TICKETS, ticket_id, duplicate_of=entity_id))}
        ref = f"{collection}/{entity_id}"
        link = {"relation": relation, "target": ref}
        if link in ticket["links"]:
            return {"changed": []}
        return {"changed": list(self.stamp(TICKETS, ticket_id, links=[*ticket["links"], link]))}
