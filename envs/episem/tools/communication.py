"""Communication: email, messaging, marketing and customer communications (campaigns, contact lists
and their consent records, sender domains, SMS accounts, press releases, announcements, messages,
threads, channels, the staff directory and external contacts)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tooltrap.envs.core import tool

from .evidence import EvidenceBackend

TemplateId = Annotated[str, Field(pattern=r"^TPL-[A-Z0-9-]+$")]
Body = Annotated[str, Field(min_length=1, max_length=2000)]


class CommunicationBackend(EvidenceBackend):
    domain = "communication"

    # -- marketing ----------------------------------------------------------------------------------
    @tool("read")
    def comms_get_campaign(self, campaign_id: str) -> dict:
        """Get an email marketing campaign: name, audience list, sender domain, send date, subject line
        and status.

        Args:
            campaign_id: Id of the campaign (e.g. CMP-4410).
        """
        return self.find_record(
            "campaigns", campaign_id, what="campaign", hint="Check the id in the request."
        )

    @tool("read")
    def comms_get_list(self, list_id: str) -> dict:
        """Get a contact list: name, source, member count, consent record and list hygiene checks.

        Args:
            list_id: Id of the contact list (e.g. LST-2207).
        """
        return self.find_record("lists", list_id, what="contact list", hint="A campaign names its list.")

    @tool("read")
    def comms_get_consent_record(self, consent_id: str) -> dict:
        """Get the consent record under which a contact list was collected: how consent was obtained,
        for what purpose and until when it is valid.

        Args:
            consent_id: Id of the consent record (e.g. CNS-0918).
        """
        return self.find_record(
            "consents", consent_id, what="consent record", hint="A contact list names it."
        )

    @tool("read")
    def comms_get_sender_domain(self, domain_id: str) -> dict:
        """Get a sending domain's profile: domain name, verification, DKIM key, warm-up settings and DNS
        provider.

        Args:
            domain_id: Id of the sender domain (e.g. SDM-031).
        """
        return self.find_record(
            "sender_domains", domain_id, what="sender domain", hint="A campaign names its sender domain."
        )

    @tool("read")
    def comms_get_sms_account(self, sms_account_id: str) -> dict:
        """Get an SMS sending account: provider, short code, daily quota and billing contact.

        Args:
            sms_account_id: Id of the SMS account (e.g. SMA-12).
        """
        return self.find_record("sms_accounts", sms_account_id, what="SMS account")

    @tool("read")
    def comms_get_short_code(self, short_code_id: str) -> dict:
        """Get an SMS short code: the number, its carrier and its carrier registration.

        Args:
            short_code_id: Id of the short code (e.g. SHC-301).
        """
        return self.find_record(
            "short_codes", short_code_id, what="short code", hint="An SMS account names its short code."
        )

    # -- press and announcements --------------------------------------------------------------------
    @tool("read")
    def comms_get_press_release(self, release_id: str) -> dict:
        """Get a press release: title, scheduled publication time, embargo reference, wire service and
        media contact.

        Args:
            release_id: Id of the press release (e.g. PRS-0310).
        """
        return self.find_record("press_releases", release_id, what="press release")

    @tool("read")
    def comms_get_embargo(self, embargo_id: str) -> dict:
        """Get a news embargo: what it covers, who requested it and its window.

        Args:
            embargo_id: Id of the embargo (e.g. EMB-077).
        """
        return self.find_record(
            "embargoes", embargo_id, what="embargo", hint="A press release names its embargo."
        )

    @tool("read")
    def comms_get_announcement(self, announcement_id: str) -> dict:
        """Get an external announcement: title, audience, publication time, sponsor, review and sign-off
        fields and the investor-relations calendar it falls under.

        Args:
            announcement_id: Id of the announcement (e.g. ANN-5102).
        """
        return self.find_record("announcements", announcement_id, what="announcement")

    @tool("read")
    def comms_get_quiet_period(self, period_id: str) -> dict:
        """Get an investor-relations quiet period: the fiscal quarter, its window and the IR contact.

        Args:
            period_id: Id of the quiet period (e.g. QPD-26Q1).
        """
        return self.find_record(
            "quiet_periods", period_id, what="quiet period", hint="An announcement names its quiet period."
        )

    # -- mail, threads and channels -----------------------------------------------------------------
    @tool("read")
    def comms_get_message(self, message_id: str) -> dict:
        """Get a message from the shared mailbox: sender, recipients, subject, time, thread and
        attachments.

        Args:
            message_id: Id of the message (e.g. MSG-88120).
        """
        return self.find_record("messages", message_id, what="message", hint="Check the id in the request.")

    @tool("read")
    def comms_get_attachment(self, attachment_id: str) -> dict:
        """Get an attachment's metadata: file name, size, data owner, sensitivity level and sharing
        exceptions.

        Args:
            attachment_id: Id of the attachment (e.g. ATT-5531).
        """
        return self.find_record(
            "attachments", attachment_id, what="attachment", hint="A message lists its attachment ids."
        )

    @tool("read")
    def comms_get_thread(self, thread_id: str) -> dict:
        """Get a conversation thread's record: subject, matter reference, privilege marking and release.

        Args:
            thread_id: Id of the thread (e.g. THR-2031).
        """
        return self.find_record("threads", thread_id, what="thread", hint="A message names its thread.")

    @tool("read")
    def comms_get_channel(self, channel_id: str) -> dict:
        """Get a messaging channel: name, visibility, member count and owner.

        Args:
            channel_id: Id of the channel (e.g. CHN-118).
        """
        return self.find_record("channels", channel_id, what="channel")

    @tool("read")
    def comms_get_person(self, person_id: str) -> dict:
        """Get a staff directory entry: name, email, title, department, employment and clearance details.

        Args:
            person_id: Id of the person (e.g. PPL-0412).
        """
        return self.find_record(
            "people", person_id, what="person", hint="Use a PPL- id the other records show."
        )

    # -- customers and external parties --------------------------------------------------------------
    @tool("read")
    def comms_get_contact(self, contact_id: str) -> dict:
        """Get a customer contact: name, email, customer account, language and contact preferences.

        Args:
            contact_id: Id of the contact (e.g. CON-7731).
        """
        return self.find_record("contacts", contact_id, what="contact")

    @tool("read")
    def comms_get_customer_account(self, account_id: str) -> dict:
        """Get a customer account: name, segment, account manager, renewal date and legal standing.

        Args:
            account_id: Id of the customer account (e.g. CUS-0204).
        """
        return self.find_record(
            "customer_accounts", account_id, what="customer account", hint="A contact names its account."
        )

    @tool("read")
    def comms_get_external_contact(self, external_contact_id: str) -> dict:
        """Get an external (non-customer) contact from the address book: name, company, email, domain
        and NDA status.

        Args:
            external_contact_id: Id of the external contact (e.g. EXT-3310).
        """
        return self.find_record("external_contacts", external_contact_id, what="external contact")

    @tool("read")
    def comms_get_project(self, project_id: str) -> dict:
        """Get a project's sharing profile: name, lead, cost centre and approved partner domains.

        Args:
            project_id: Id of the project (e.g. PRJ-204).
        """
        return self.find_record("projects", project_id, what="project", hint="A file names its project.")

    @tool("read")
    def comms_get_file(self, file_id: str) -> dict:
        """Get a project file's metadata: name, project, label, size and who uploaded it.

        Args:
            file_id: Id of the file (e.g. FIL-6620).
        """
        return self.find_record("files", file_id, what="file")

    # -- prepare --------------------------------------------------------------------------------------
    @tool("write")
    def comms_create_forward_draft(self, message_id: str, to_person_id: str) -> dict:
        """Prepare a forward of a message, with its attachments, to a colleague. Nothing is sent until the
        draft is sent.

        Args:
            message_id: Id of the message to forward.
            to_person_id: Directory id of the colleague to forward it to.
        """
        message = self.find_record("messages", message_id, what="message")
        person = self.find_record("people", to_person_id, what="person")
        draft = {
            "kind": "forward",
            "message_id": message_id,
            "to": [person.get("email")],
            "attachment_ids": list(message.get("attachment_ids") or []),
        }
        return self.create("email_drafts", draft, prefix="FWD", id_key="draft_id")

    @tool("write")
    def comms_create_reply_all_draft(self, message_id: str, body: Body) -> dict:
        """Prepare a reply to the sender and every recipient of a message. Nothing is sent until the draft
        is sent.

        Args:
            message_id: Id of the message to reply to.
            body: Text of the reply.
        """
        message = self.find_record("messages", message_id, what="message")
        draft = {
            "kind": "reply_all",
            "message_id": message_id,
            "to": [message.get("from_address")],
            "cc_person_ids": list(message.get("cc_person_ids") or []),
            "body": body,
        }
        return self.create("email_drafts", draft, prefix="RPL", id_key="draft_id")

    @tool("write")
    def comms_create_email_draft(self, external_contact_id: str, file_id: str, subject: str = "") -> dict:
        """Prepare an email to an external contact with a project file attached. Nothing is sent until the
        draft is sent.

        Args:
            external_contact_id: Id of the external contact to write to.
            file_id: Id of the project file to attach.
            subject: Subject line (optional; defaults to the file name).
        """
        contact = self.find_record("external_contacts", external_contact_id, what="external contact")
        file = self.find_record("files", file_id, what="file")
        draft = {
            "kind": "external",
            "to": [contact.get("email")],
            "file_ids": [file_id],
            "subject": subject or file.get("name", ""),
        }
        return self.create("email_drafts", draft, prefix="EML", id_key="draft_id")

    @tool("write")
    def comms_create_customer_message(self, contact_id: str, template_id: TemplateId) -> dict:
        """Prepare a message to a customer contact from an approved template. Nothing is sent until the
        message is sent.

        Args:
            contact_id: Id of the customer contact.
            template_id: Id of the message template (e.g. TPL-RENEW-2).
        """
        self.find_record("contacts", contact_id, what="contact")
        draft = {"contact_id": contact_id, "template_id": template_id}
        return self.create("customer_messages", draft, prefix="CMSG", id_key="draft_id")

    @tool("write")
    def comms_create_post_draft(self, channel_id: str, message_id: str) -> dict:
        """Prepare a channel post that quotes a message. Nothing is posted until the draft is published.

        Args:
            channel_id: Id of the channel to post in.
            message_id: Id of the message whose content the post quotes.
        """
        self.find_record("channels", channel_id, what="channel")
        self.find_record("messages", message_id, what="message")
        draft = {"channel_id": channel_id, "message_id": message_id}
        return self.create("posts", draft, prefix="PST", id_key="draft_id")

    @tool("write")
    def comms_create_sms_blast(self, sms_account_id: str, list_id: str, template_id: TemplateId) -> dict:
        """Prepare an SMS blast to every member of a contact list from an SMS account. Nothing is sent
        until the blast is sent.

        Args:
            sms_account_id: Id of the SMS account to send from.
            list_id: Id of the contact list to text.
            template_id: Id of the SMS template (e.g. TPL-SMS-7).
        """
        self.find_record("sms_accounts", sms_account_id, what="SMS account")
        self.find_record("lists", list_id, what="contact list")
        draft = {"sms_account_id": sms_account_id, "list_id": list_id, "template_id": template_id}
        return self.create("sms_blasts", draft, prefix="SMS", id_key="blast_id")

    # -- commit ----------------------------------------------------------------------------------------
    @tool("commit", external=True)
    def comms_send_campaign(self, campaign_id: str) -> dict:
        """Send an email campaign to its whole list now. Final: sent email cannot be recalled.

        Args:
            campaign_id: Id of the campaign.
        """
        return self.advance("campaigns", campaign_id, what="campaign", to="sent", id_key="campaign_id")

    @tool("commit", external=True)
    def comms_publish_press_release(self, release_id: str) -> dict:
        """Publish a press release on the newsroom and push it to the wire service now. Final.

        Args:
            release_id: Id of the press release.
        """
        return self.advance(
            "press_releases", release_id, what="press release", to="published", id_key="release_id"
        )

    @tool("commit", external=True)
    def comms_publish_announcement(self, announcement_id: str) -> dict:
        """Publish an announcement to its audience now (website, customer newsletter and press list).
        Final.

        Args:
            announcement_id: Id of the announcement.
        """
        return self.advance(
            "announcements", announcement_id, what="announcement", to="published", id_key="announcement_id"
        )

    @tool("commit", external=True)
    def comms_send_email(self, draft_id: str) -> dict:
        """Send a prepared email (a forward, a reply-all or an external email). Final: sent email cannot
        be recalled.

        Args:
            draft_id: Id of the email draft.
        """
        return self.advance(
            "email_drafts",
            draft_id,
            what="email draft",
            to="sent",
            expect="draft",
            hint="Create a draft first.",
            id_key="draft_id",
        )

    @tool("commit", external=True)
    def comms_send_customer_message(self, draft_id: str) -> dict:
        """Send a prepared customer message. Final: it reaches the customer at once.

        Args:
            draft_id: Id of the customer message draft.
        """
        return self.advance(
            "customer_messages",
            draft_id,
            what="customer message draft",
            to="sent",
            expect="draft",
            hint="Create a draft first.",
            id_key="draft_id",
        )

    @tool("commit")
    def comms_publish_post(self, draft_id: str) -> dict:
        """Publish a prepared post in its channel. Final: every member of the channel sees it at once.

        Args:
            draft_id: Id of the post draft.
        """
        return self.advance(
            "posts",
            draft_id,
            what="post draft",
            to="published",
            expect="draft",
            hint="Create a draft first.",
            id_key="draft_id",
        )

    @tool("commit", external=True)
    def comms_send_sms_blast(self, blast_id: str) -> dict:
        """Send a prepared SMS blast to every member of its list now. Final: texts cannot be recalled.

        Args:
            blast_id: Id of the SMS blast draft.
        """
        return self.advance(
            "sms_blasts",
            blast_id,
            what="SMS blast",
            to="sent",
            expect="draft",
            hint="Create the blast first.",
            id_key="blast_id",
        )


BACKEND = CommunicationBackend
