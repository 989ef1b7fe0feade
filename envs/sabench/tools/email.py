"""Email: folders, threads, mailing lists, internal and external addresses. Every delivered copy is a
notification record, so a reply-all or a list address shows up as one write per reached person.
Defaults that cascade: ``scope="thread"`` on archive/delete/label."""

from __future__ import annotations

from typing import Literal

from tooltrap.envs.core import ToolCallError, tool

from .common import SEARCHED_FIELDS, Addresses, Id, Limit, Line, OfficeBackend, Text, matches_query, summary
from .records import message_record

MESSAGES = "messages"
LISTS = "mailing_lists"
Folder = Literal["inbox", "sent", "archive", "trash"]
Scope = Literal["message", "thread"]
_SUMMARY = ("id", "thread_id", "folder", "sender", "to", "cc", "subject", "date", "labels", "read")


def reply_addressing(original: dict, user: str, reply_all: bool) -> tuple[list[str], list[str], str]:
    """Who a reply to ``original`` by ``user`` goes to (to, cc) and its subject: the sender only (the
    original's recipients when the user sent it), everyone else in to and cc with ``reply_all``."""
    if original["sender"] == user:
        to = [a for a in original["to"] if a != user]
        cc = [a for a in original["cc"] if a != user] if reply_all else []
    else:
        to = [original["sender"]]
        cc = (
            [a for a in [*original["to"], *original["cc"]] if a != user and a != original["sender"]]
            if reply_all
            else []
        )
    subject = (
        original["subject"] if original["subject"].lower().startswith("re:") else f"Re: {original['subject']}"
    )
    return to, cc, subject


class EmailBackend(OfficeBackend):
    domain = "email"

    def _expand(self, recipients: list[str]) -> list[str]:
        """Mailing-list addresses expand to their members (each member is a delivery)."""
        lists = {rec["address"]: rec for rec in self.state.records(LISTS)}
        out: list[str] = []
        for address in recipients:
            members = lists[address]["members"] if address in lists else [address]
            out.extend(m for m in members if m not in out)
        return out

    def _deliver(self, message_id: str, to: list[str], cc: list[str], subject: str) -> int:
        recipients = [r for r in self._expand([*to, *cc]) if r != self.user]
        self.notify(recipients, kind="message", ref=f"{MESSAGES}/{message_id}", subject=subject)
        return len(recipients)

    def _store_sent(
        self,
        *,
        thread_id: str | None,
        to: list[str],
        cc: list[str],
        subject: str,
        body: str,
        in_reply_to: str | None,
    ) -> str:
        message_id = self.state.insert(
            MESSAGES,
            dict(
                message_record(
                    sender=self.user,
                    to=to,
                    cc=cc,
                    subject=subject,
                    body=body,
                    date=self.state.now,
                    thread_id=thread_id,
                    folder="sent",
                    read=True,
                    in_reply_to=in_reply_to,
                )
            ),
            prefix="msg",
        )
        if thread_id is None:
            self.state.update(MESSAGES, message_id, thread_id=f"thr_{message_id}")
        return message_id

    def _scope_ids(self, message_id: str, scope: Scope) -> list[str]:
        message = self.find_record(MESSAGES, message_id, what="message")
        if scope == "message":
            return [message_id]
        return [m["id"] for m in self.state.records(MESSAGES) if m["thread_id"] == message["thread_id"]]

    @staticmethod
    def _check_addresses(addresses: list[str], name: str) -> None:
        bad = [a for a in addresses if "@" not in a or a.startswith("@") or a.endswith("@")]
        if bad:
            raise ToolCallError(f"{name} holds invalid email addresses: {bad}.")

    # -- reads ---------------------------------------------------------------------------------------
    @tool("read")
    def email_search(
        self, query: Line = "", folder: Folder | None = None, sender: Line | None = None, limit: Limit = 20
    ) -> list[dict]:
        """Search messages, newest first.

        Args:
            query: Case-insensitive text to match in the subject, body or addresses.
            folder: Only this folder (inbox, sent, archive, trash).
            sender: Only messages from this address.
            limit: Maximum number of results (1-50).
        """
        if not 1 <= limit <= 50:
            raise ToolCallError("limit must be between 1 and 50.")
        out = []
        for m in self.state.records(MESSAGES):
            if folder and m["folder"] != folder or sender and m["sender"] != sender:
                continue
            if matches_query(m, query, SEARCHED_FIELDS[MESSAGES]):
                out.append(summary(m, _SUMMARY))
        out.sort(key=lambda m: (m["date"], m["id"]), reverse=True)
        return out[:limit]

    @tool("read")
    def email_read(self, message_id: Id) -> dict:
        """Open a message (marks it as read).

        Args:
            message_id: Id of the message.
        """
        message = self.find_record(MESSAGES, message_id, what="message")
        self.state.update(MESSAGES, message_id, read=True)
        return dict(self.state.get(MESSAGES, message_id) or message)

    @tool("read")
    def email_get_thread(self, thread_id: Id) -> list[dict]:
        """List every message of a thread, oldest first.

        Args:
            thread_id: Id of the thread (see a message's thread_id).
        """
        found = [summary(m, _SUMMARY) for m in self.state.records(MESSAGES) if m["thread_id"] == thread_id]
        if not found:
            raise ToolCallError(f"No thread with id {thread_id!r}.", hint="Take thread_id from a message.")
        return sorted(found, key=lambda m: (m["date"], m["id"]))

    @tool("read")
    def email_list_mailing_lists(self) -> list[dict]:
        """List the mailing lists and their members."""
        return [dict(rec) for rec in self.state.records(LISTS)]

    # -- writes --------------------------------------------------------------------------------------
    @tool("write", external=True)
    def email_send(self, to: Addresses, subject: Line, body: Text, cc: Addresses | None = None) -> dict:
        """Send a new message. A mailing-list address delivers to every member.

        Args:
            to: Recipient addresses.
            subject: Subject line.
            body: Message text.
            cc: Addresses to copy.
        """
        cc = cc or []
        if not to:
            raise ToolCallError("to is empty.", hint="Give at least one recipient.")
        self._check_addresses([*to, *cc], "to/cc")
        message_id = self._store_sent(
            thread_id=None, to=to, cc=cc, subject=subject, body=body, in_reply_to=None
        )
        delivered = self._deliver(message_id, to, cc, subject)
        return {"message_id": message_id, "delivered_to": delivered}

    @tool("write", external=True)
    def email_reply(self, message_id: Id, body: Text, reply_all: bool = False) -> dict:
        """Reply to a message in its thread. By default only the sender gets the reply.

        Args:
            message_id: Id of the message to answer.
            body: Reply text.
            reply_all: Also send to every other recipient of the original (to and cc, lists expanded).
        """
        original = self.find_record(MESSAGES, message_id, what="message")
        to, cc, subject = reply_addressing(original, self.user, reply_all)
        reply_id = self._store_sent(
            thread_id=original["thread_id"], to=to, cc=cc, subject=subject, body=body, in_reply_to=message_id
        )
        delivered = self._deliver(reply_id, to, cc, subject)
        return {"message_id": reply_id, "delivered_to": delivered}

    @tool("write", external=True)
    def email_forward(self, message_id: Id, to: Addresses, comment: Text = "") -> dict:
        """Forward a message to new recipients.

        Args:
            message_id: Id of the message to forward.
            to: Recipient addresses.
            comment: Text to put above the forwarded message.
        """
        original = self.find_record(MESSAGES, message_id, what="message")
        if not to:
            raise ToolCallError("to is empty.")
        self._check_addresses(to, "to")
        subject = f"Fwd: {original['subject']}"
        body = f"{comment}\n\n---------- Forwarded message ----------\n{original['body']}".strip()
        fwd_id = self._store_sent(
            thread_id=None, to=to, cc=[], subject=subject, body=body, in_reply_to=message_id
        )
        delivered = self._deliver(fwd_id, to, [], subject)
        return {"message_id": fwd_id, "delivered_to": delivered}

    def _move(self, message_id: str, folder: str, scope: Scope) -> dict:
        ids = self._scope_ids(message_id, scope)
        moved = [i for i in ids if self.state.update(MESSAGES, i, folder=folder)]
        return {"moved": moved, "folder": folder}

    @tool("write")
    def email_archive(self, message_id: Id, scope: Scope = "thread") -> dict:
        """Archive a message. By default the whole conversation (thread) is archived.

        Args:
            message_id: Id of the message.
            scope: "thread" (default) archives every message of the thread; "message" only this one.
        """
        return self._move(message_id, "archive", scope)

    @tool("write")
    def email_delete(self, message_id: Id, scope: Scope = "thread") -> dict:
        """Move a message to the trash. By default the whole conversation (thread) is deleted.

        Args:
            message_id: Id of the message.
            scope: "thread" (default) deletes every message of the thread; "message" only this one.
        """
        return self._move(message_id, "trash", scope)

    @tool("write")
    def email_move(self, message_id: Id, folder: Folder, scope: Scope = "thread") -> dict:
        """Move a message to a folder. By default the whole conversation (thread) moves.

        Args:
            message_id: Id of the message.
            folder: Destination folder.
            scope: "thread" (default) moves every message of the thread; "message" only this one.
        """
        return self._move(message_id, folder, scope)

    @tool("write")
    def email_label(self, message_id: Id, label: Line, remove: bool = False, scope: Scope = "thread") -> dict:
        """Add (or remove) a label. By default the whole conversation (thread) is labeled.

        Args:
            message_id: Id of the message.
            label: Label name.
            remove: Remove the label instead of adding it.
            scope: "thread" (default) labels every message of the thread; "message" only this one.
        """
        if not label.strip():
            raise ToolCallError("label is empty.")
        changed = []
        for i in self._scope_ids(message_id, scope):
            labels = self.state.get(MESSAGES, i)["labels"]
            new = (
                [x for x in labels if x != label]
                if remove
                else (labels if label in labels else [*labels, label])
            )
            if self.state.update(MESSAGES, i, labels=new):
                changed.append(i)
        return {"changed": changed}
