"""The base class of the generated BACnet enumerations (:mod:`buildwire.bacnet_enums`)."""

from __future__ import annotations

import enum
from typing import Any


class BacnetEnum(enum.IntEnum):
    """Base of the BACnet enumerations: an ``int`` with the standard hyphenated name.

    ``.name`` is the Python member name (``DEGREES_FAHRENHEIT``), ``.bacnet_name`` and
    ``str()`` the standard name (``degrees-fahrenheit``).
    """

    @property
    def bacnet_name(self) -> str:
        """Give the standard hyphenated name (``"degrees-fahrenheit"``), or the number."""
        name: str = self._name_
        if name not in type(self).__members__:  # a number the table does not list
            return str(int(self))
        return name.lower().replace("_", "-")

    def __str__(self) -> str:
        """Give the standard name, as the command line prints it."""
        return self.bacnet_name

    def __format__(self, spec: str) -> str:
        """Format as the standard name (``f"{units}"``), or as a number with a spec."""
        return format(int(self), spec) if spec else self.bacnet_name

    @classmethod
    def from_name(cls, name: str) -> Any:
        """Find the member named ``name`` (``"degrees-fahrenheit"`` or ``"DEGREES_FAHRENHEIT"``).

        Raises:
            ValueError: when no member has that name.

        """
        key = name.strip().upper().replace("-", "_").replace(" ", "_")
        try:
            return cls[key]
        except KeyError:
            raise ValueError(f"{name!r} is not a {cls.__name__} name") from None

    @classmethod
    def _missing_(cls, value: object) -> Any:
        """Make a member named ``UNKNOWN_<n>`` for a number the table does not list."""
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}"
        member._value_ = value
        return member
