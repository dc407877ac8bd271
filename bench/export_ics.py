#!/usr/bin/env python3
"""iCalendar reader benchmark: load a generated calendar export of N events.

    python bench/export_ics.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)
"""

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("budget review garden plan sprint retro dentist train flight hotel dinner launch release client invoice "
         "team offsite workshop school parents yoga swim boiler repair roof meeting agenda notes decision").split()
PEOPLE = [("Ana Lima", "ana@example.com"), ("Bo Chen", "bo@example.com"), ("Cy Park", "cy@example.com"),
          ("Dee Okafor", "dee@example.com"), ("Eli Novak", "eli@example.com")]
CALENDARS = [("Work", "Europe/Paris"), ("Family", "America/New_York"), ("Holidays", None)]
PARIS = """BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r
TZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r
BEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"""


def _fold(line: str) -> str:
    """RFC 5545 folding: lines over 75 characters continue on lines starting with a space."""
    parts = [line[:75]] + [" " + line[i:i + 74] for i in range(75, len(line), 74)]
    return "\r\n".join(parts)


def _event(rng: random.Random, number: int, zone: str | None, start: datetime) -> str:
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).capitalize()
    lines = ["BEGIN:VEVENT", f"UID:{number:08d}-{rng.getrandbits(32):08x}@bench.example", f"SUMMARY:{title}",
             "DTSTAMP:20240101T000000Z"]
    if zone is None:
        lines += [f"DTSTART;VALUE=DATE:{start:%Y%m%d}", f"DTEND;VALUE=DATE:{start + timedelta(days=1):%Y%m%d}"]
    else:
        end = start + timedelta(minutes=rng.choice((30, 45, 60, 90)))
        lines += [f"DTSTART;TZID={zone}:{start:%Y%m%dT%H%M%S}", f"DTEND;TZID={zone}:{end:%Y%m%dT%H%M%S}"]
    if rng.random() < 0.5:
        lines.append(f"LOCATION:Room {rng.randint(1, 40)}\\, building {rng.choice('ABC')}")
    if rng.random() < 0.6:
        said = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))) for _ in range(rng.randint(1, 4))]
        lines.append("DESCRIPTION:" + "\\n".join(s.capitalize() + "." for s in said))
    if rng.random() < 0.15:
        day = rng.choice(["MO", "TU", "WE", "TH", "FR"])
        lines.append(f"RRULE:FREQ=WEEKLY;BYDAY={day};COUNT={rng.randint(4, 20)}")
    if zone is not None and rng.random() < 0.5:
        organizer = rng.choice(PEOPLE)
        lines.append(f"ORGANIZER;CN={organizer[0]}:mailto:{organizer[1]}")
        for name, email in rng.sample(PEOPLE, rng.randint(1, 4)):
            lines.append(f"ATTENDEE;CN={name};ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;RSVP=TRUE:mailto:{email}")
    if rng.random() < 0.3:
        lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT15M", "DESCRIPTION:Reminder", "END:VALARM"]
    lines.append("END:VEVENT")
    return "\r\n".join(_fold(line) for line in lines) + "\r\n"


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write ``messages`` events over three calendar files (zoned, zoned, all-day) into ``folder``."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for index, (name, zone) in enumerate(CALENDARS):
        count = messages // len(CALENDARS) + (1 if index < messages % len(CALENDARS) else 0)
        start = datetime(2022, 1, 3, 9, 0)
        with open(folder / f"{name.lower()}.ics", "w", encoding="utf-8", newline="") as out:
            out.write(f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//VecBook bench//EN\r\nX-WR-CALNAME:{name}\r\n")
            if zone == "Europe/Paris":
                out.write(PARIS)
            for number in range(count):
                start += timedelta(hours=rng.randint(1, 30)) if zone else timedelta(days=rng.randint(1, 3))
                out.write(_event(rng, number, zone, start))
            out.write("END:VCALENDAR\r\n")
    return folder


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "ics", *sys.argv[1:]])
