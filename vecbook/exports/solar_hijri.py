"""The Solar Hijri (Persian) calendar, which phones set to Persian write chat dates in: 1402/12/15
is 2024-03-05. Iran's and Afghanistan's calendar: the year starts at Nowruz (20 or 21 March), its
first six months have 31 days, the next five 30, and Esfand 29, or 30 in a leap year."""

from __future__ import annotations

from datetime import date, timedelta

# Leap years by the 33-year cycle (8 in each), which agrees with the astronomical calendar Iran
# keeps for the years WhatsApp has existed in and long after (1399 and 1403 leap, 1408 the next).
_EPOCH = date(622, 3, 21)  # 1/1/1, in the proleptic Gregorian calendar Python counts


def _days_before(year: int, month: int) -> int:
    """Days from 1/1/1 to the first of ``month`` of ``year``."""
    years = year - 1
    leap_days = (8 * years + 29) // 33  # leap years before ``year`` in the 33-year cycle
    return 365 * years + leap_days + (31 * (month - 1) if month <= 7 else 186 + 30 * (month - 7))


def is_leap(year: int) -> bool:
    """Whether Esfand (the 12th month) of ``year`` has 30 days."""
    return (8 * year + 29) % 33 < 8


def to_gregorian(year: int, month: int, day: int) -> tuple[int, int, int] | None:
    """(year, month, day) in the Gregorian calendar; None for a day the Solar Hijri one has not
    (Esfand 30 in a common year, a month past 12)."""
    length = 31 if month <= 6 else 30 if month <= 11 else 30 if is_leap(year) else 29
    if not (year >= 1 and 1 <= month <= 12 and 1 <= day <= length):
        return None
    found = _EPOCH + timedelta(days=_days_before(year, month) + day - 1)
    return found.year, found.month, found.day
