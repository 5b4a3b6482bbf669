"""Python values of the BACnet property values the Rust side describes.

The JSON shape is in docs/conventions.md: enumerations become :mod:`buildwire.bacnet_enums`
members, multi-state values :class:`State`, date-times :class:`datetime.datetime`.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from buildwire.bacnet_enums import ENUMERATIONS, ObjectType, ServicesSupported


class State(int):
    """A multi-state value: the state number, with the object's state-text as ``name``.

    >>> state = State(2, "occupied")
    >>> state == 2, state.name, str(state)
    (True, 'occupied', 'occupied')
    """

    name: str
    """The object's state-text for this state."""

    def __new__(cls, value: int, name: str) -> State:
        """Make a state ``value`` named ``name``."""
        state = super().__new__(cls, value)
        state.name = name
        return state

    def __repr__(self) -> str:
        """``State(2, 'occupied')``."""
        return f"State({int(self)}, {self.name!r})"

    def __str__(self) -> str:
        """Give the state-text."""
        return self.name


def _date_time(value: dict[str, str]) -> Any:
    """Turn a fully specified BACnet date-time into a naive :class:`datetime.datetime`.

    The result is the device's local time (BACnet date-times carry no offset); a date-time
    with an unspecified field stays the ``{"date", "time"}`` texts it came as.
    """
    date = value["date"].split(" ", 1)[0]
    if "*" in date or "*" in value["time"]:
        return value
    return _dt.datetime.strptime(f"{date} {value['time']}0000", "%Y-%m-%d %H:%M:%S.%f")


def element_value(element: dict[str, Any]) -> Any:
    """Turn one described element into a Python value (constructed data becomes a list)."""
    if "children" in element:
        return [element_value(c) for c in element["children"]]
    if "context" in element:
        return {"context": element["context"], "hex": element["hex"]}
    kind, value = element["type"], element["value"]
    enumeration = element.get("enumeration")
    if enumeration in ENUMERATIONS:
        return ENUMERATIONS[enumeration](value)
    if "name" in element:
        return State(value, element["name"])
    if kind == "date-time":
        return _date_time(value)
    if kind == "object-types-supported":
        return [ObjectType.from_name(n) if isinstance(n, str) else ObjectType(n) for n in value]
    if kind == "services-supported":
        return [
            ServicesSupported.from_name(n) if isinstance(n, str) else ServicesSupported(n)
            for n in value
        ]
    return value


def property_value(elements: list[dict[str, Any]]) -> Any:
    """Turn a property's described elements into one value, or a list when there are several.

    Enumerations become :mod:`buildwire.bacnet_enums` members (``units == 62``,
    ``str(units) == "degrees-celsius"``), multi-state values :class:`State`, status flags
    and other constructed values dicts, date-times :class:`datetime.datetime`.
    """
    values = [element_value(e) for e in elements]
    return values[0] if len(values) == 1 else values
