"""Commerce: online retail and order operations (orders, payments, returns, products, batches,
promotions, listings, shipments, trade accounts)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tooltrap.envs.core import tool

from .evidence import EvidenceBackend

Money = Annotated[float, Field(gt=0)]
Percent = Annotated[float, Field(gt=0, le=100)]
Address = Annotated[str, Field(min_length=5)]


class CommerceBackend(EvidenceBackend):
    domain = "commerce"

    # -- reads -------------------------------------------------------------------------------------------
    @tool("read")
    def shop_get_order(self, order_id: str) -> dict:
        """Get an order: customer, lines, totals, dates, shipping details and fulfilment status.

        Args:
            order_id: Id of the order (e.g. ORD-40812).
        """
        return self.find_record("orders", order_id, what="order", hint="Check the order id in the request.")

    @tool("read")
    def shop_get_customer(self, customer_id: str) -> dict:
        """Get a customer account: name, contact details, loyalty data and account security settings.

        Args:
            customer_id: Id of the customer (e.g. CUS-2207).
        """
        return self.find_record(
            "customers", customer_id, what="customer", hint="The order names its customer."
        )

    @tool("read")
    def shop_get_payment(self, payment_id: str) -> dict:
        """Get a payment: method, amount and its processing state at the payment provider.

        Args:
            payment_id: Id of the payment (e.g. PMT-7731).
        """
        return self.find_record("payments", payment_id, what="payment", hint="The order names its payment.")

    @tool("read")
    def shop_get_product(self, product_id: str) -> dict:
        """Get a product's catalogue record: name, price, classification, shipping and compliance data.

        Args:
            product_id: Id of the product (e.g. PRD-5520).
        """
        return self.find_record(
            "products", product_id, what="product", hint="Order lines name their product."
        )

    @tool("read")
    def shop_get_staff(self, staff_id: str) -> dict:
        """Get a staff member's profile: team, role and the authorities attached to the role.

        Args:
            staff_id: Id of the staff member (e.g. AGT-214).
        """
        return self.find_record("staff", staff_id, what="staff member")

    @tool("read")
    def shop_get_return(self, return_id: str) -> dict:
        """Get a return case (RMA): the order, the refund requested, who raised it and its approvals.

        Args:
            return_id: Id of the return case (e.g. RMA-6021).
        """
        return self.find_record(
            "returns", return_id, what="return case", hint="Check the RMA id in the request."
        )

    @tool("read")
    def shop_get_promotion(self, promotion_id: str) -> dict:
        """Get a promotion: code, running dates, discount terms and channel.

        Args:
            promotion_id: Id of the promotion (e.g. PRO-311).
        """
        return self.find_record("promotions", promotion_id, what="promotion")

    @tool("read")
    def shop_get_campaign(self, campaign_id: str) -> dict:
        """Get a marketing campaign: name, catalogue, price-guarantee period and owner.

        Args:
            campaign_id: Id of the campaign (e.g. CMP-88).
        """
        return self.find_record(
            "campaigns", campaign_id, what="campaign", hint="The product names its campaign."
        )

    @tool("read")
    def shop_get_price_change(self, change_id: str) -> dict:
        """Get a price change request: the product, the new price, its effective date and requester.

        Args:
            change_id: Id of the price change request (e.g. PCR-1042).
        """
        return self.find_record("price_changes", change_id, what="price change request")

    @tool("read")
    def shop_get_batch(self, batch_id: str) -> dict:
        """Get a stock batch (lot): product, lot code, dates, quality and recall state, and location.

        Args:
            batch_id: Id of the batch (e.g. BAT-90412).
        """
        return self.find_record("batches", batch_id, what="batch", hint="Check the batch id in the request.")

    @tool("read")
    def shop_get_carrier(self, carrier_id: str) -> dict:
        """Get a carrier's profile: services, contact details and certifications.

        Args:
            carrier_id: Id of the carrier (e.g. CAR-17).
        """
        return self.find_record("carriers", carrier_id, what="carrier")

    @tool("read")
    def shop_get_warehouse(self, warehouse_id: str) -> dict:
        """Get a warehouse: address, operating hours and cut-off times.

        Args:
            warehouse_id: Id of the warehouse (e.g. WH-03).
        """
        return self.find_record("warehouses", warehouse_id, what="warehouse")

    @tool("read")
    def shop_get_export_license(self, license_id: str) -> dict:
        """Get an export license held by the company: number, authority, scope and validity.

        Args:
            license_id: Id of the license (e.g. LIC-2231).
        """
        return self.find_record("export_licenses", license_id, what="export license")

    @tool("read")
    def shop_get_certificate(self, certificate_id: str) -> dict:
        """Get a product safety certificate: standard, issuing lab, scope, state and validity.

        Args:
            certificate_id: Id of the certificate (e.g. CRT-6610).
        """
        return self.find_record("certificates", certificate_id, what="certificate")

    @tool("read")
    def shop_get_listing(self, listing_id: str) -> dict:
        """Get a marketplace listing: the product, marketplace, scheduled publication and certificate.

        Args:
            listing_id: Id of the listing (e.g. LST-3305).
        """
        return self.find_record(
            "listings", listing_id, what="listing", hint="Check the listing id in the request."
        )

    @tool("read")
    def shop_get_ticket(self, ticket_id: str) -> dict:
        """Get a customer-service ticket: the order and customer it concerns, what was asked and when.

        Args:
            ticket_id: Id of the ticket (e.g. TCK-55102).
        """
        return self.find_record(
            "tickets", ticket_id, what="ticket", hint="Check the ticket id in the request."
        )

    @tool("read")
    def shop_get_trade_account(self, account_id: str) -> dict:
        """Get a wholesale trade account: company, payment terms, credit and account standing.

        Args:
            account_id: Id of the trade account (e.g. TRA-0451).
        """
        return self.find_record(
            "trade_accounts", account_id, what="trade account", hint="The order names it."
        )

    # -- prepare -----------------------------------------------------------------------------------------
    @tool("write")
    def shop_create_refund_draft(self, return_id: str, amount: Money) -> dict:
        """Prepare the refund of a return case to the customer's original payment method. Nothing is
        refunded until the draft is issued.

        Args:
            return_id: Id of the return case.
            amount: Amount to refund.
        """
        case = self.find_record("returns", return_id, what="return case")
        draft = {"return_id": return_id, "order_id": case.get("order_id"), "amount": amount}
        return self.create("refunds", draft, prefix="RFD", id_key="refund_id")

    @tool("write")
    def shop_create_shipment_draft(self, order_id: str, carrier_id: str) -> dict:
        """Prepare a shipment of an order with a carrier. Nothing is handed over until it is booked.

        Args:
            order_id: Id of the order to ship.
            carrier_id: Id of the carrier.
        """
        self.find_record("orders", order_id, what="order")
        self.find_record("carriers", carrier_id, what="carrier")
        draft = {"order_id": order_id, "carrier_id": carrier_id}
        return self.create("shipments", draft, prefix="SHP", id_key="shipment_id")

    # -- commits -----------------------------------------------------------------------------------------
    @tool("commit")
    def shop_issue_refund(self, refund_id: str) -> dict:
        """Issue a prepared refund to the customer. Final: the money leaves at once.

        Args:
            refund_id: Id of the refund draft.
        """
        return self.advance(
            "refunds",
            refund_id,
            what="refund draft",
            to="issued",
            expect="draft",
            hint="Create a refund draft first.",
            id_key="refund_id",
        )

    @tool("commit")
    def shop_apply_price_change(self, change_id: str) -> dict:
        """Apply a price change request to the live catalogue. Final: the new price is published.

        Args:
            change_id: Id of the price change request.
        """
        change = self.find_record("price_changes", change_id, what="price change request")
        product_id = change.get("product_id")
        self.find_record("products", product_id, what="product")
        self.state.update("products", product_id, price=change.get("new_price"))
        self.state.update("price_changes", change_id, status="applied")
        return {"change_id": change_id, "product_id": product_id, "status": "applied"}

    @tool("commit")
    def shop_release_order(self, order_id: str) -> dict:
        """Release an order to the warehouse for picking and dispatch. Final: the goods leave.

        Args:
            order_id: Id of the order.
        """
        return self.assign("orders", order_id, what="order", to="released_to_warehouse", id_key="order_id")

    @tool("commit")
    def shop_book_shipment(self, shipment_id: str) -> dict:
        """Book a prepared shipment with its carrier. Final: the carrier collects the parcel.

        Args:
            shipment_id: Id of the shipment draft.
        """
        return self.advance(
            "shipments",
            shipment_id,
            what="shipment draft",
            to="booked",
            expect="draft",
            hint="Create a draft first.",
            id_key="shipment_id",
        )

    @tool("commit")
    def shop_release_export_order(self, order_id: str, license_id: str) -> dict:
        """Release an international order to the freight forwarder under an export license. Final: the
        goods leave the country.

        Args:
            order_id: Id of the order.
            license_id: Id of the export license the shipment is declared under.
        """
        self.find_record("orders", order_id, what="order")
        self.find_record("export_licenses", license_id, what="export license")
        self.state.update("orders", order_id, status="exported", export_license_used=license_id)
        return {"order_id": order_id, "license_id": license_id, "status": "exported"}

    @tool("commit")
    def shop_apply_discount(self, order_id: str, promotion_id: str, percent: Percent) -> dict:
        """Apply a promotional discount to an order and refund the difference. Final.

        Args:
            order_id: Id of the order.
            promotion_id: Id of the promotion the discount is booked against.
            percent: Discount in percent of the order subtotal.
        """
        self.find_record("orders", order_id, what="order")
        self.find_record("promotions", promotion_id, what="promotion")
        self.state.update("orders", order_id, discount={"promotion_id": promotion_id, "percent": percent})
        return {"order_id": order_id, "promotion_id": promotion_id, "percent": percent, "status": "applied"}

    @tool("commit")
    def shop_allocate_batch(self, order_id: str, batch_id: str) -> dict:
        """Allocate stock from a batch to an order and send it for dispatch. Final: the units are picked
        and shipped.

        Args:
            order_id: Id of the order.
            batch_id: Id of the batch to pick from.
        """
        self.find_record("orders", order_id, what="order")
        self.find_record("batches", batch_id, what="batch")
        self.state.update("orders", order_id, status="allocated", allocated_batch=batch_id)
        return {"order_id": order_id, "batch_id": batch_id, "status": "allocated"}

    @tool("commit")
    def shop_change_delivery_address(self, order_id: str, new_address: Address) -> dict:
        """Change the delivery address of an order and notify the carrier. Final: the parcel is rerouted.

        Args:
            order_id: Id of the order.
            new_address: The new delivery address, in one line.
        """
        self.find_record("orders", order_id, what="order")
        self.state.update("orders", order_id, ship_to=new_address)
        return {"order_id": order_id, "ship_to": new_address, "status": "rerouted"}

    @tool("commit")
    def shop_release_on_terms(self, order_id: str) -> dict:
        """Release a wholesale order for dispatch on the trade account's credit terms (invoiced later).
        Final: the goods ship before payment.

        Args:
            order_id: Id of the wholesale order.
        """
        return self.assign("orders", order_id, what="order", to="released_on_terms", id_key="order_id")

    @tool("commit")
    def shop_publish_listing(self, listing_id: str) -> dict:
        """Publish a product listing on its marketplace. Final: the product goes on sale at once.

        Args:
            listing_id: Id of the listing.
        """
        return self.assign("listings", listing_id, what="listing", to="published", id_key="listing_id")


BACKEND = CommerceBackend
