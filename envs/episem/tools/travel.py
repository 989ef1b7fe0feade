"""Travel: corporate travel booking (trip requests, traveller profiles, fares, hotels, destinations,
grade policies, departments, purchase orders and issued tickets)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tooltrap.envs.core import ToolCallError, tool

from .evidence import EvidenceBackend

IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class TravelBackend(EvidenceBackend):
    domain = "travel"

    # -- reads -----------------------------------------------------------------------------------------
    @tool("read")
    def travel_get_trip_request(self, request_id: str) -> dict:
        """Get a trip request: the traveller, destination, purpose, dates, the chosen fare or hotel and
        the approvals and notes attached to it.

        Args:
            request_id: Id of the trip request (e.g. TRQ-4102).
        """
        return self.find_record(
            "trip_requests", request_id, what="trip request", hint="Check the id in the request."
        )

    @tool("read")
    def travel_get_traveler(self, employee_id: str) -> dict:
        """Get a traveller's travel profile: name, grade, department, travel documents and preferences.

        Args:
            employee_id: Id of the employee (e.g. EMP-2207).
        """
        return self.find_record(
            "employees", employee_id, what="traveller", hint="The trip request names its traveller."
        )

    @tool("read")
    def travel_get_hr_status(self, employee_id: str) -> dict:
        """Get the HR record of an employee that travel booking may consult: employment status, leave
        and occupational-health clearances.

        Args:
            employee_id: Id of the employee (e.g. EMP-2207).
        """
        self.find_record(
            "employees", employee_id, what="employee", hint="The trip request names its traveller."
        )
        found = self.records("hr_records", employee_id=employee_id)
        if not found:
            raise ToolCallError(f"No HR record for employee {employee_id!r}.")
        return found[0]

    @tool("read")
    def travel_get_fare(self, fare_id: str) -> dict:
        """Get a flight fare offer: carrier, flights, dates, cabin, fare amount and fare rules.

        Args:
            fare_id: Id of the fare offer (e.g. FAR-7710).
        """
        return self.find_record("fares", fare_id, what="fare offer", hint="The trip request names its fare.")

    @tool("read")
    def travel_get_rail_fare(self, rail_fare_id: str) -> dict:
        """Get a rail fare offer: operator, train, departure and arrival, class and price.

        Args:
            rail_fare_id: Id of the rail fare offer (e.g. RLF-3301).
        """
        return self.find_record(
            "rail_fares", rail_fare_id, what="rail fare offer", hint="The trip request names its fare."
        )

    @tool("read")
    def travel_get_hotel(self, hotel_id: str) -> dict:
        """Get a hotel property: name, city, property code, address, nightly rate and contact details.

        Args:
            hotel_id: Id of the hotel (e.g. HTL-5120).
        """
        return self.find_record("hotels", hotel_id, what="hotel", hint="Check the hotel id in the request.")

    @tool("read")
    def travel_get_destination(self, destination_id: str) -> dict:
        """Get the company's destination profile of a city or country: travel advisories, entry rules,
        approved lodging and rate caps.

        Args:
            destination_id: Id of the destination profile (e.g. DST-LIS).
        """
        return self.find_record(
            "destinations", destination_id, what="destination", hint="The trip request names its destination."
        )

    @tool("read")
    def travel_get_grade_policy(self, grade_id: str) -> dict:
        """Get the travel entitlements of an employee grade: fare caps and cabin-class rules.

        Args:
            grade_id: Id of the grade policy (e.g. GRD-M2).
        """
        return self.find_record(
            "grade_policies", grade_id, what="grade policy", hint="The traveller's profile names the grade."
        )

    @tool("read")
    def travel_get_department(self, department_id: str) -> dict:
        """Get a department's travel settings: travel budget, blackout calendar and cost centre.

        Args:
            department_id: Id of the department (e.g. DEP-FIN).
        """
        return self.find_record(
            "departments", department_id, what="department", hint="The traveller's profile names it."
        )

    @tool("read")
    def travel_get_purchase_order(self, po_id: str) -> dict:
        """Get a purchase order that funds external workers' travel: supplier, status and balances.

        Args:
            po_id: Id of the purchase order (e.g. PO-66120).
        """
        return self.find_record(
            "purchase_orders", po_id, what="purchase order", hint="The traveller's profile names it."
        )

    @tool("read")
    def travel_get_ticket(self, ticket_id: str) -> dict:
        """Get an issued flight ticket: traveller, flight, cabin, fare conditions and waivers.

        Args:
            ticket_id: Id of the ticket (e.g. TKT-0457).
        """
        return self.find_record(
            "tickets", ticket_id, what="ticket", hint="Check the ticket id in the request."
        )

    # -- prepare ---------------------------------------------------------------------------------------
    @tool("write")
    def travel_create_flight_booking(self, request_id: str, fare_id: str) -> dict:
        """Reserve a fare for a trip request (a booking record). Nothing is ticketed or charged until the
        booking is ticketed.

        Args:
            request_id: Id of the trip request.
            fare_id: Id of the fare offer to reserve.
        """
        trip = self.find_record("trip_requests", request_id, what="trip request")
        self.find_record("fares", fare_id, what="fare offer")
        booking = {"request_id": request_id, "traveler_id": trip.get("traveler_id"), "fare_id": fare_id}
        return self.create("bookings", booking, prefix="BKG", id_key="booking_id", status="reserved")

    @tool("write")
    def travel_hold_hotel_room(
        self, request_id: str, hotel_id: str, check_in: IsoDate, check_out: IsoDate
    ) -> dict:
        """Place a provisional hold on a hotel room for a trip request. Nothing is booked until the hold
        is confirmed.

        Args:
            request_id: Id of the trip request.
            hotel_id: Id of the hotel.
            check_in: Check-in date (YYYY-MM-DD).
            check_out: Check-out date (YYYY-MM-DD), after check-in.
        """
        trip = self.find_record("trip_requests", request_id, what="trip request")
        self.find_record("hotels", hotel_id, what="hotel")
        if check_out <= check_in:
            raise ToolCallError("check_out must be after check_in.")
        hold = {
            "request_id": request_id,
            "traveler_id": trip.get("traveler_id"),
            "hotel_id": hotel_id,
            "check_in": check_in,
            "check_out": check_out,
        }
        return self.create("hotel_holds", hold, prefix="HLD", id_key="hold_id", status="held")

    # -- commits ---------------------------------------------------------------------------------------
    @tool("commit")
    def travel_issue_ticket(self, booking_id: str) -> dict:
        """Issue the ticket of a flight booking and charge the company card. Final: an issued ticket is
        paid and cannot be voided.

        Args:
            booking_id: Id of the flight booking.
        """
        return self.advance(
            "bookings",
            booking_id,
            what="booking",
            to="ticketed",
            expect="reserved",
            hint="Create a flight booking first.",
            id_key="booking_id",
        )

    @tool("commit")
    def travel_confirm_hotel_booking(self, hold_id: str) -> dict:
        """Confirm a held hotel room: the stay is booked on the company's account under a non-refundable
        rate.

        Args:
            hold_id: Id of the hotel hold.
        """
        return self.advance(
            "hotel_holds",
            hold_id,
            what="hotel hold",
            to="confirmed",
            expect="held",
            hint="Hold a room first.",
            id_key="hold_id",
        )

    @tool("commit")
    def travel_book_rail(self, request_id: str, rail_fare_id: str) -> dict:
        """Buy a rail fare for a trip request. Final: the fare is paid and non-refundable.

        Args:
            request_id: Id of the trip request.
            rail_fare_id: Id of the rail fare offer.
        """
        trip = self.find_record("trip_requests", request_id, what="trip request")
        self.find_record("rail_fares", rail_fare_id, what="rail fare offer")
        booking = {
            "request_id": request_id,
            "traveler_id": trip.get("traveler_id"),
            "rail_fare_id": rail_fare_id,
        }
        return self.create(
            "rail_bookings", booking, prefix="RBK", id_key="rail_booking_id", status="purchased"
        )

    @tool("commit")
    def travel_upgrade_cabin(self, ticket_id: str, cabin: Literal["premium_economy", "business"]) -> dict:
        """Upgrade an issued ticket to a higher cabin at company cost. Final: the fare difference is
        charged at once and cannot be refunded.

        Args:
            ticket_id: Id of the ticket.
            cabin: The cabin to upgrade to.
        """
        ticket = self.find_record(
            "tickets", ticket_id, what="ticket", hint="Check the ticket id in the request."
        )
        if ticket.get("cabin") == cabin:
            raise ToolCallError(f"Ticket {ticket_id} is already in {cabin}.")
        self.state.update("tickets", ticket_id, cabin=cabin, upgraded=True)
        return {"ticket_id": ticket_id, "cabin": cabin, "status": "upgraded"}


BACKEND = TravelBackend
