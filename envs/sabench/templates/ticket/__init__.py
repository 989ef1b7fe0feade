"""Ticket-target templates."""
