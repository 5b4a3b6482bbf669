"""ISO 8601 text from the Rust side to timezone-aware :mod:`datetime` values."""

from __future__ import annotations

import datetime as _dt
import re

__all__ = ["iso_text", "parse_datetime"]

_FRACTION = re.compile(r"\.(\d+)")


def iso_text(text: str) -> str:
    """Make ISO text readable by every supported Python's ``fromisoformat``.

    Haystack and OPC UA allow any number of fraction digits (OPC UA has 100 ns ticks) and
    ``Z``; Python before 3.11 wants 3 or 6 digits and an explicit offset.
    """
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
    return text[:-1] + "+00:00" if text.endswith("Z") else text


def parse_datetime(text: str | None) -> _dt.datetime | None:
    """Parse ISO text into a timezone-aware datetime (UTC when the text has no offset)."""
    if text is None:
        return None
    parsed = _dt.datetime.fromisoformat(iso_text(text))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=_dt.timezone.utc)
