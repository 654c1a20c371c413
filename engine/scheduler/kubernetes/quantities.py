"""Kubernetes resource quantities: written from a packing plan's resources, read back
from a StatefulSet's pod template (to compare sizes on ``update``)."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

KIB = 1024
MIB = 1024 ** 2
GIB = 1024 ** 3

_SUFFIXES = {
    "": Decimal(1), "m": Decimal("0.001"),
    "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
                       r"([eE][+-]?[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")


def cpu_quantity(cores: float) -> str:
    """``1.5`` -> ``"1500m"``, ``2.0`` -> ``"2"``; rounded up to the next millicore."""
    milli = math.ceil(round(cores * 1000, 6))
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def bytes_quantity(value: int) -> str:
    """``1073741824`` -> ``"1Gi"``; the largest binary suffix that divides exactly."""
    value = int(value)
    for size, suffix in ((GIB, "Gi"), (MIB, "Mi"), (KIB, "Ki")):
        if value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)


def parse_quantity(text: str | int | float) -> Decimal:
    """A quantity as a number (cores or bytes): ``"500m"`` -> 0.5, ``"1Gi"`` -> 1073741824."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return Decimal(str(text))
    match = _QUANTITY.match(str(text).strip())
    if not match:
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    number, exponent, suffix = match.groups()
    try:
        value = Decimal(number)
        if exponent:
            value *= Decimal(10) ** int(exponent[1:])
    except InvalidOperation:
        raise ValueError(f"not a Kubernetes quantity: {text!r}") from None
    return value * _SUFFIXES[suffix or ""]
