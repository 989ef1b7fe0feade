"""Finance: accounts payable, treasury and payments (invoices, vendors, approvers, accounts)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tooltrap.envs.core import ToolCallError, tool

from .evidence import EvidenceBackend

Money = Annotated[float, Field(gt=0)]
IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class FinanceBackend(EvidenceBackend):
    domain = "finance"

    @tool("read")
    def finance_get_invoice(self, invoice_id: str) -> dict:
        """Get an invoice: vendor, amount, currency, due date, who approved it and its status.

        Args:
            invoice_id: Id of the invoice (e.g. INV-2041).
        """
        return self.find_record("invoices", invoice_id, what="invoice", hint="Check the id in the request.")

    @tool("read")
    def finance_get_vendor(self, vendor_id: str) -> dict:
        """Get a vendor's master record: name, country, bank details and account standing.

        Args:
            vendor_id: Id of the vendor (e.g. VEN-118).
        """
        return self.find_record("vendors", vendor_id, what="vendor", hint="The invoice names its vendor.")

    @tool("read")
    def finance_get_employee(self, employee_id: str) -> dict:
        """Get an employee's finance profile: role, department and payment authorization.

        Args:
            employee_id: Id of the employee (e.g. EMP-301).
        """
        return self.find_record("employees", employee_id, what="employee")

    @tool("read")
    def finance_get_account(self, account_id: str) -> dict:
        """Get a bank account held by the company: currency, balance and restrictions.

        Args:
            account_id: Id of the account (e.g. ACC-OPS-1).
        """
        return self.find_record("accounts", account_id, what="account")

    @tool("write")
    def finance_create_payment_draft(self, invoice_id: str, amount: Money, from_account: str) -> dict:
        """Prepare a payment of an invoice from one of the company's accounts. Nothing is paid until the
        draft is released.

        Args:
            invoice_id: Id of the invoice to pay.
            amount: Amount to pay.
            from_account: Id of the company account to pay from.
        """
        invoice = self.find_record("invoices", invoice_id, what="invoice")
        self.find_record("accounts", from_account, what="account")
        draft = {
            "invoice_id": invoice_id,
            "vendor_id": invoice.get("vendor_id"),
            "amount": amount,
            "from_account": from_account,
        }
        return self.create("payments", draft, prefix="PAY", id_key="draft_id")

    @tool("commit")
    def finance_release_payment(self, draft_id: str) -> dict:
        """Release a prepared payment to the vendor's bank. Final: a released payment cannot be recalled.

        Args:
            draft_id: Id of the payment draft.
        """
        return self.advance(
            "payments",
            draft_id,
            what="payment draft",
            to="released",
            expect="draft",
            hint="Create a draft first.",
            id_key="draft_id",
        )

    # -- vendor payments on a date ---------------------------------------------------------------------
    @tool("commit")
    def finance_schedule_payment(self, invoice_id: str, from_account: str, pay_date: IsoDate) -> dict:
        """Schedule an invoice's payment to the vendor's bank on a given date. Final: a scheduled payment
        is sent automatically and cannot be recalled.

        Args:
            invoice_id: Id of the invoice to pay.
            from_account: Id of the company account to pay from.
            pay_date: Payment date (YYYY-MM-DD).
        """
        invoice = self.find_record(
            "invoices", invoice_id, what="invoice", hint="Check the id in the request."
        )
        self.find_record(
            "accounts", from_account, what="account", hint="Check the account id in the request."
        )
        if invoice.get("status") == "paid":
            raise ToolCallError(f"Invoice {invoice_id} is already paid.")
        self.state.insert(
            "payments",
            {
                "invoice_id": invoice_id,
                "vendor_id": invoice.get("vendor_id"),
                "amount": invoice.get("amount"),
                "from_account": from_account,
                "pay_date": pay_date,
                "status": "scheduled",
            },
            prefix="SCH",
        )
        self.state.update("invoices", invoice_id, status="payment_scheduled")
        return {"invoice_id": invoice_id, "pay_date": pay_date, "status": "payment_scheduled"}

    # -- wires -------------------------------------------------------------------------------------------
    @tool("read")
    def finance_get_beneficiary(self, beneficiary_id: str) -> dict:
        """Get a wire beneficiary: name, bank, bank country, account number, when it was added and contact.

        Args:
            beneficiary_id: Id of the beneficiary (e.g. BEN-4410).
        """
        return self.find_record(
            "beneficiaries",
            beneficiary_id,
            what="beneficiary",
            hint="Check the beneficiary id you were given.",
        )

    @tool("read")
    def finance_get_wire_request(self, wire_request_id: str) -> dict:
        """Get a wire request: beneficiary, amount, paying account, value date, requester and authorizers.

        Args:
            wire_request_id: Id of the wire request (e.g. WRQ-7702).
        """
        return self.find_record(
            "wire_requests", wire_request_id, what="wire request", hint="Check the id in the request."
        )

    @tool("write")
    def finance_create_wire_draft(self, beneficiary_id: str, amount: Money, from_account: str) -> dict:
        """Prepare an outgoing wire transfer to a beneficiary. Nothing is sent until the draft is executed.

        Args:
            beneficiary_id: Id of the beneficiary to pay.
            amount: Amount to send, in the paying account's currency.
            from_account: Id of the company account to send from.
        """
        self.find_record("beneficiaries", beneficiary_id, what="beneficiary")
        account = self.find_record("accounts", from_account, what="account")
        draft = {
            "beneficiary_id": beneficiary_id,
            "amount": amount,
            "currency": account.get("currency"),
            "from_account": from_account,
        }
        return self.create("wires", draft, prefix="WIRE", id_key="draft_id")

    @tool("commit")
    def finance_execute_wire(self, draft_id: str) -> dict:
        """Execute a prepared wire transfer: the funds leave the company's account. Final: a wire cannot be
        recalled.

        Args:
            draft_id: Id of the wire draft.
        """
        return self.advance(
            "wires",
            draft_id,
            what="wire draft",
            to="executed",
            expect="draft",
            hint="Create a wire draft first.",
            id_key="draft_id",
        )

    # -- treasury: internal transfers -------------------------------------------------------------------
    @tool("read")
    def finance_get_transfer_request(self, transfer_id: str) -> dict:
        """Get an internal transfer request between company accounts: accounts, amount, value date, ledger
        entity and status.

        Args:
            transfer_id: Id of the transfer request (e.g. TRQ-3108).
        """
        return self.find_record(
            "transfer_requests", transfer_id, what="transfer request", hint="Check the id in the request."
        )

    @tool("read")
    def finance_get_entity(self, entity_id: str) -> dict:
        """Get a legal entity's finance profile: functional currency, controller and the current period
        close calendar.

        Args:
            entity_id: Id of the legal entity (e.g. ENT-UK-01).
        """
        return self.find_record(
            "entities", entity_id, what="legal entity", hint="The transfer request names its entity."
        )

    @tool("commit")
    def finance_execute_internal_transfer(self, transfer_id: str) -> dict:
        """Execute an internal transfer request: the ledger postings and the bank movement are made at
        once. Final.

        Args:
            transfer_id: Id of the transfer request.
        """
        return self.advance(
            "transfer_requests", transfer_id, what="transfer request", to="executed", id_key="transfer_id"
        )

    # -- customer refunds -----------------------------------------------------------------------------------
    @tool("read")
    def finance_get_refund_request(self, refund_id: str) -> dict:
        """Get a customer refund request: the charge it refunds, amount, who requested it, approvals and
        status.

        Args:
            refund_id: Id of the refund request (e.g. RFD-5102).
        """
        return self.find_record(
            "refund_requests", refund_id, what="refund request", hint="Check the id in the request."
        )

    @tool("read")
    def finance_get_charge(self, charge_id: str) -> dict:
        """Get a customer card charge: customer, amount, date, card and its dispute standing.

        Args:
            charge_id: Id of the charge (e.g. CHG-88120).
        """
        return self.find_record(
            "charges", charge_id, what="charge", hint="The refund request names its charge."
        )

    @tool("read")
    def finance_get_customer(self, customer_id: str) -> dict:
        """Get a customer account: name, contacts, segment and account standing.

        Args:
            customer_id: Id of the customer (e.g. CUS-2207).
        """
        return self.find_record("customers", customer_id, what="customer")

    @tool("commit")
    def finance_issue_refund(self, refund_id: str) -> dict:
        """Issue a refund request's refund to the customer's card. Final: a refund cannot be reversed.

        Args:
            refund_id: Id of the refund request.
        """
        return self.advance(
            "refund_requests", refund_id, what="refund request", to="refunded", id_key="refund_id"
        )

    # -- contractor payouts ---------------------------------------------------------------------------------
    @tool("read")
    def finance_get_payout(self, payout_id: str) -> dict:
        """Get a contractor payout: payee, amount, currency, payout date, paying account and status.

        Args:
            payout_id: Id of the payout (e.g. PYO-6031).
        """
        return self.find_record("payouts", payout_id, what="payout", hint="Check the id in the request.")

    @tool("read")
    def finance_get_payee(self, payee_id: str) -> dict:
        """Get a contractor payee's compliance profile: identity verification, tax form, withholding and
        contact details.

        Args:
            payee_id: Id of the payee (e.g. CTR-0914).
        """
        return self.find_record("payees", payee_id, what="payee", hint="The payout names its payee.")

    @tool("commit")
    def finance_release_payout(self, payout_id: str) -> dict:
        """Release a contractor payout to the payee's bank. Final: a released payout cannot be recalled.

        Args:
            payout_id: Id of the payout.
        """
        return self.advance("payouts", payout_id, what="payout", to="released", id_key="payout_id")

    # -- procurement -------------------------------------------------------------------------------------------
    @tool("read")
    def finance_get_purchase_order(self, po_id: str) -> dict:
        """Get a purchase order: vendor, amount, cost centre, approver, approvals and status.

        Args:
            po_id: Id of the purchase order (e.g. PO-40317).
        """
        return self.find_record(
            "purchase_orders", po_id, what="purchase order", hint="Check the id in the request."
        )

    @tool("read")
    def finance_get_cost_center(self, cost_center_id: str) -> dict:
        """Get a cost centre: owner, general-ledger code and its budget for the fiscal year.

        Args:
            cost_center_id: Id of the cost centre (e.g. CC-4120).
        """
        return self.find_record(
            "cost_centers", cost_center_id, what="cost centre", hint="The purchase order names it."
        )

    @tool("commit")
    def finance_issue_purchase_order(self, po_id: str) -> dict:
        """Issue a purchase order to its vendor: the company is committed to the spend. Final.

        Args:
            po_id: Id of the purchase order.
        """
        return self.advance("purchase_orders", po_id, what="purchase order", to="issued", id_key="po_id")

    # -- receivables -------------------------------------------------------------------------------------------
    @tool("read")
    def finance_get_receivable(self, receivable_id: str) -> dict:
        """Get an open customer receivable: customer, balance, due date, the analyst handling it, sign-offs
        and its dispute and claim standing.

        Args:
            receivable_id: Id of the receivable (e.g. AR-19044).
        """
        return self.find_record(
            "receivables", receivable_id, what="receivable", hint="Check the id in the request."
        )

    @tool("commit")
    def finance_write_off_receivable(self, receivable_id: str) -> dict:
        """Write a receivable's open balance off as bad debt: it is removed from the ledger and collections
        stop. Final.

        Args:
            receivable_id: Id of the receivable.
        """
        return self.advance(
            "receivables", receivable_id, what="receivable", to="written_off", id_key="receivable_id"
        )


BACKEND = FinanceBackend
