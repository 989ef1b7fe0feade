"""SABench's simulated systems: email, calendar, tickets, and the terminal actions."""

from .calendar import CalendarBackend
from .common import NOTIFICATIONS, OfficeBackend
from .email import EmailBackend
from .terminal import TerminalBackend
from .ticket import TicketBackend

BACKENDS = (EmailBackend, CalendarBackend, TicketBackend, TerminalBackend)

__all__ = [
    "BACKENDS",
    "NOTIFICATIONS",
    "CalendarBackend",
    "EmailBackend",
    "OfficeBackend",
    "TerminalBackend",
    "TicketBackend",
]
