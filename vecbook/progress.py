"""How far a build's embedding has come: in records for the user, in model windows for the pace.

A record is cut into windows of the model's length, and one long record (a 5 MB ``.txt`` is
~6,000 windows) can be most of a build's work while counting as one record: a pace in records
said "3003 of 3004 records (4 records/s, about 0 s left)" for twelve minutes. The rate and the
time left are counted in the texts the model embeds (and their characters), never in records;
the terminal's progress bar (the CLI's) shows them so too."""

from __future__ import annotations

import inspect
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, ClassVar


# Model windows left to embed from which a terminal shows a progress bar (~2 s of embedding on a laptop).
PROGRESS_BAR_WINDOWS = 200
# The bar goes by characters embedded (its percentage and time left); it shows windows done and their rate.
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]"
BAR_REDRAW_SECONDS = 0.5


@dataclass(frozen=True)
class Work:
    """The texts a build gives the model (one per distinct model window without a vector):
    ``windows`` of ``windows_total`` embedded so far, ``chars`` of ``chars_total`` their characters."""

    windows: int = 0
    windows_total: int = 0
    chars: int = 0
    chars_total: int = 0

    @property
    def left(self) -> int:
        """Windows still to embed."""
        return self.windows_total - self.windows


# Where a build's pace is counted from: (time.monotonic(), the Work reported then).
Since = tuple[float, Work]


def duration(seconds: float) -> str:
    """'48 s', '12 min', '3.5 h': a time left as a person reads it."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def windows_per_second(since: Since, now: float, work: Work) -> float | None:
    """Windows embedded per second since ``since``; None until there is a rate."""
    seconds = now - since[0]
    if seconds <= 0 or work.windows <= since[1].windows:
        return None
    return (work.windows - since[1].windows) / seconds


def time_left(since: Since, now: float, work: Work) -> float | None:
    """Seconds left, at the pace in characters since ``since`` (windows are embedded shortest
    first, so a pace in windows would promise the long ones as fast as the short ones)."""
    seconds = now - since[0]
    if seconds <= 0 or work.chars <= since[1].chars:
        return None
    return (work.chars_total - work.chars) / ((work.chars - since[1].chars) / seconds)


def pace(since: Since, now: float, work: Work) -> str:
    """' (4,200 of 10,000 windows, 120 windows/s, about 48 s left)' for a progress line."""
    parts = [f"{work.windows:,} of {work.windows_total:,} window{'' if work.windows_total == 1 else 's'}"]
    rate = windows_per_second(since, now, work)
    if rate is not None:
        parts.append(f"{rate:.0f} windows/s")
        left = time_left(since, now, work)
        if left is not None and work.left > 0:
            parts.append(f"about {duration(left)} left")
    return f" ({', '.join(parts)})"


def progress_line(done: int, total: int, since: Since, now: float, work: Work) -> str:
    """'embedded 4200 of 10000 records (5,100 of 12,000 windows, 120 windows/s, about 48 s left)'."""
    return f"embedded {done} of {total} records{pace(since, now, work)}"


def takes_work(callback: Callable[..., Any]) -> bool:
    """Whether a ``progress=`` callback takes the ``work`` keyword (older ones take ``(done, total)``)."""
    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    return any(p.name == "work" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def tell(callback: Callable[..., Any], done: int, total: int, work: Work) -> None:
    """Give a ``progress=`` callback the records done of total, and ``work`` where it takes it."""
    if takes_work(callback):
        callback(done, total, work=work)
    else:
        callback(done, total)


class TerminalProgress:
    """A progress bar on stderr, drawn only when stderr is a terminal and at least
    PROGRESS_BAR_WINDOWS model windows are left to embed: records done of total, the bar and the
    time left by the characters embedded, windows done and windows/s (a long record is
    thousands of windows: a bar in records stood still at 3003/3004 for minutes)."""

    # Every progress of this process: a line printed after a bar (Ctrl-C's) ends them first.
    _every: ClassVar[weakref.WeakSet[TerminalProgress]] = weakref.WeakSet()

    def __init__(self) -> None:
        self._bar: Any = None
        self._since: Since | None = None
        self._ended = False
        TerminalProgress._every.add(self)

    def __call__(self, done: int, total: int, work: Work | None = None) -> None:
        if self._ended:
            return  # the command is ending (Ctrl-C): the indexing thread's last calls draw nothing
        work = work or Work(done, total, done, total)  # a caller that counts records only
        if self._bar is None or self._bar.total != work.chars_total:
            self._close()
            if work.left < PROGRESS_BAR_WINDOWS:
                return  # a small update: over before a bar would tell anything
            from tqdm import tqdm

            self._since = (time.monotonic(), work)
            self._bar = tqdm(total=work.chars_total, initial=work.chars, file=sys.stderr, dynamic_ncols=True,
                             mininterval=BAR_REDRAW_SECONDS, desc=self._records(done, total),
                             postfix=self._windows(work), bar_format=BAR_FORMAT)
        self._bar.set_description_str(self._records(done, total), refresh=False)
        self._bar.set_postfix_str(self._windows(work), refresh=False)
        self._bar.update(work.chars - self._bar.n)
        if work.left <= 0:
            self._close()

    @staticmethod
    def _records(done: int, total: int) -> str:
        return f"embedding {done:,} of {total:,} records"

    def _windows(self, work: Work) -> str:
        rate = windows_per_second(self._since or (time.monotonic(), work), time.monotonic(), work)
        return f"{work.windows:,}/{work.windows_total:,} windows" + (f", {rate:.1f} windows/s" if rate else "")

    @classmethod
    def end_all(cls) -> None:
        """Close every bar still drawn, at what it reached, and draw no more: a line printed next
        starts a line of its own instead of trailing a bar that Python would draw again at exit."""
        for progress in list(cls._every):
            progress._ended = True
            progress._close()

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
