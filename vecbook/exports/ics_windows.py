"""Windows' names of time zones, as Outlook and Exchange write them in a TZID: the zone ids
(``W. Europe Standard Time``), and the regions a display name says where it names no city an
IANA zone is named by (``(UTC-08:00) Pacific Time (US & Canada)``)."""

from __future__ import annotations

import re

# A Windows display name: its offset from UTC in standard time, as Windows XP wrote it (GMT) or
# later ones (UTC; none for UTC itself), and the cities or region it names.
DISPLAY_NAME = re.compile(r"^\s*\(\s*(?:UTC|GMT)\s*(?:([+-])\s*(\d{1,2}):(\d{2}))?\s*\)\s*(.+?)\s*$", re.IGNORECASE)
# The regions Windows' display names say (in English) that no IANA zone is named by, and the
# Windows zone id each is the display name of (CLDR's table makes that an IANA zone). A display
# name of cities needs none: a city it says names the zone.
REGIONS = {
    "coordinated universal time": "UTC", "coordinated universal time-02": "UTC-02",
    "coordinated universal time-08": "UTC-08", "coordinated universal time-09": "UTC-09",
    "coordinated universal time-11": "UTC-11", "coordinated universal time+12": "UTC+12",
    "coordinated universal time+13": "UTC+13", "international date line west": "Dateline Standard Time",
    "aleutian islands": "Aleutian Standard Time", "hawaii": "Hawaiian Standard Time",
    "marquesas islands": "Marquesas Standard Time", "alaska": "Alaskan Standard Time",
    "baja california": "Pacific Standard Time (Mexico)", "pacific time (us & canada)": "Pacific Standard Time",
    "arizona": "US Mountain Standard Time", "mountain time (us & canada)": "Mountain Standard Time",
    "yukon": "Yukon Standard Time", "central america": "Central America Standard Time",
    "central time (us & canada)": "Central Standard Time", "saskatchewan": "Canada Central Standard Time",
    "eastern time (us & canada)": "Eastern Standard Time", "indiana (east)": "US Eastern Standard Time",
    "haiti": "Haiti Standard Time", "turks and caicos": "Turks And Caicos Standard Time",
    "atlantic time (canada)": "Atlantic Standard Time", "newfoundland": "Newfoundland Standard Time",
    "brasilia": "E. South America Standard Time", "greenland": "Greenland Standard Time",
    "saint pierre and miquelon": "Saint Pierre Standard Time", "cabo verde is.": "Cape Verde Standard Time",
    "west central africa": "W. Central Africa Standard Time", "sri jayawardenepura": "Sri Lanka Standard Time",
    "astana": "Central Asia Standard Time", "solomon is., new caledonia": "Central Pacific Standard Time",
    "samoa": "Samoa Standard Time", "bougainville island": "Bougainville Standard Time",
}


def windows_zones() -> dict[str, str]:
    """Windows zone names (Outlook's "W. Europe Standard Time") to IANA ones, CLDR's table as the
    icalendar library keeps it, in the order of the Windows names."""
    try:
        from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON
    except ImportError:  # (a library without it: the names stay unknown)
        return {}
    return WINDOWS_TO_OLSON


def region_zone(said: str) -> str | None:
    """The IANA zone of a region a display name says (``Pacific Time (US & Canada)``), else None."""
    windows = REGIONS.get(" ".join(said.casefold().split()))
    return windows_zones().get(windows) if windows else None
