"""Who and where an iCalendar event names: its organizer and attendees as people, and the
attendees that are rooms or resources (a meeting room booked by inviting it) as where it is;
and the event's text that says them."""

from __future__ import annotations

import re
from typing import Any

# The calendar user types (RFC 5545 CUTYPE) that are places or things booked, not people.
PLACE_TYPES = frozenset({"ROOM", "RESOURCE"})
# Google Calendar books its rooms and resources under addresses of this domain (with CUTYPE=RESOURCE,
# which an app that rewrites the file may drop).
_RESOURCE_ADDRESS_RE = re.compile(r"@resource\.calendar\.google\.com$", re.I)


def person(address: Any) -> tuple[str, str] | None:
    """(display name, email) of an ORGANIZER or ATTENDEE: its CN, else the email. An address
    that is no mail address (Apple's calendar server writes ``urn:uuid:...``, Outlook
    ``invalid:nomail`` for a person without one, Exchange ``/o=ExchangeLabs/...``) gives its
    place to the ``EMAIL`` parameter (RFC 7986), else to none: it names no one. The name's
    spaces and line breaks are one space each."""
    if address is None:
        return None
    params = getattr(address, "params", {})
    written = str(address).strip()
    email = written[7:].strip() if written[:7].lower() == "mailto:" else written
    if "@" not in email:
        email = _parameter(params, "EMAIL").strip('"')
        email = email if "@" in email else ""
    # (a CN may hold a line break, RFC 6868's ^n: a name is said on one line)
    name = " ".join(_parameter(params, "CN").strip('"').split())
    return (name or email, email) if name or email else None


Person = tuple[str, str]


def _parameter(params: Any, name: str) -> str:
    """A parameter's text; one the library read as a list (a comma left unquoted, as some writers
    leave ``CN=Müller, Anna``) joined back with its commas."""
    value = params.get(name)
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(part).strip() for part in value)
    return str(value or "").strip()


def people_and_rooms(component: Any) -> tuple[Person | None, list[Person], list[str]]:
    """A component's organizer and attendees as people (see ``person``), each named by their
    address only (Google writes ``CN=ana@example.com`` for the organizer among the attendees, and
    for anyone not in the owner's contacts) given the name the event has for that address
    elsewhere; and the rooms and resources booked as attendees."""
    listed = component.get("ATTENDEE")
    organizer = person(component.get("ORGANIZER"))
    attendees, rooms = attendees_and_rooms(listed if isinstance(listed, list) else [] if listed is None else [listed])
    everyone = [organizer, *attendees] if organizer else attendees
    names = {email.casefold(): name for name, email in everyone if email and name.casefold() != email.casefold()}
    everyone = [(names.get(email.casefold(), name) if name.casefold() == email.casefold() else name, email)
                for name, email in everyone]
    return (everyone[0], everyone[1:], rooms) if organizer else (None, everyone, rooms)


def attendees_and_rooms(attendees: list[Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """The ATTENDEE properties as people (see ``person``) and as the names of the rooms and
    resources among them (``CUTYPE=ROOM``/``RESOURCE``, or a Google resource address)."""
    people, rooms = [], []
    for attendee in attendees:
        found = person(attendee)
        if found is None:
            continue
        kind = str(getattr(attendee, "params", {}).get("CUTYPE") or "").strip().upper()
        if kind in PLACE_TYPES or _RESOURCE_ADDRESS_RE.search(found[1]):
            rooms.append(found[0])
        else:
            people.append(found)
    return people, list(dict.fromkeys(rooms))


def where(location: str, rooms: list[str]) -> str:
    """Where an event is: its LOCATION on one line (Apple writes a place's name and address a line
    each), then each booked room it does not already name."""
    location = ", ".join(line.strip().rstrip(",;").strip() for line in location.splitlines() if line.strip(" ,;"))
    said = location.casefold()
    return "; ".join([location] * bool(location) + [room for room in rooms if room.casefold() not in said])


def event_text(summary: str, details: list[str], place: str, organizer: tuple[str, str] | None,
               attendees: list[tuple[str, str]], description: str) -> str:
    """A record's text: the summary, When/Repeats/Where/Organizer/Attendees lines, the description."""
    lines = [summary, *details]
    if place:
        lines.append(f"Where: {place}")
    if organizer:
        lines.append(f"Organizer: {organizer[0]}")
    if attendees:
        lines.append("Attendees: " + ", ".join(name for name, _ in attendees))
    return "\n".join(lines) + (f"\n\n{description}" if description else "")
