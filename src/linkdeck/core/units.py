"""Pure formatting and normalisation of bits, bytes, speeds and rates."""

from __future__ import annotations

import math
import re

from ..settings.limits import MAX_SPEED_MBPS

# Values that drivers and tools print when they do not know the speed. Each one has been
# shown to users as a real speed by some tool (10 Mb/s for 10, 4295 Mb/s for 2**32-1 bit/s).
_SPEED_SENTINELS_MBPS = {0, -1, 65535, 4294967295, 4294967296}
_SPEED_SENTINEL_TEXT = {"unknown", "unknown!", "", "-", "--", "?", "n/a", "none"}
_SPEED_TEXT = re.compile(r"-?[0-9]{1,20}(?:\.[0-9]{1,9})?")


def speed_mbps(value: object, unit: str = "mbps") -> int | None:  # noqa: PLR0911 - one return per unit step
    """Normalise a reported link speed to whole Mb/s, or None when it is unknown.

    ``unit`` is what the source reports: "mbps" (Linux sysfs, dladm), "bps" (FreeBSD
    ifi_baudrate, kstat ifspeed).
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _SPEED_SENTINEL_TEXT:
            return None
        text = text.removesuffix("mb/s").removesuffix("mbps").removesuffix("m").strip()
        # ASCII digits, a sign and a fraction only: not "1e300", "nan", "²" or 400 digits
        if not _SPEED_TEXT.fullmatch(text):
            return None
        num = int(float(text))
    elif isinstance(value, int):
        num = value
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        num = int(value)
    else:
        return None
    if unit == "bps":
        if num in (0, 4294967295, 18446744073709551615) or num < 0:
            return None
        num = num // 1_000_000
        if num == 0 or num > MAX_SPEED_MBPS:  # below 1 Mb/s: a sentinel in practice
            return None
        return num
    if num in _SPEED_SENTINELS_MBPS or num < 0 or num > MAX_SPEED_MBPS:
        return None
    return num


_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float, unit: str, digits: int = 3) -> str:
    """Format with an SI prefix and about ``digits`` significant digits: 94.1 Mb/s."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    for factor, prefix in _SI:
        if value >= factor * 0.9995:
            return f"{sign}{_sig(value / factor, digits)} {prefix}{unit}"
    return f"{sign}{_sig(value, digits)} {unit}"


def _sig(value: float, digits: int) -> str:
    # Decide the decimals on the rounded value, so 9.996 prints "10.0" and not "10.00", and
    # a steady rate does not flicker between two widths.
    if value == 0:
        return "0"
    for limit, decimals in ((10, digits - 1), (100, digits - 2)):
        if round(value, max(decimals, 0)) < limit:
            return f"{value:.{max(decimals, 0)}f}"
    return f"{value:.0f}"


def rate(bits_per_s: float | None, in_bytes: bool = False, short: bool = False) -> str:
    """A throughput for display: bit/s with SI prefixes, or bytes/s when ``in_bytes``;
    ``short`` for a narrow cell drops the unit and the space: "927M"."""
    if bits_per_s is None:
        return "—"
    value = bits_per_s / 8 if in_bytes else bits_per_s
    if short:
        return si(value, "").replace(" ", "")
    return si(value, "B/s" if in_bytes else "b/s")


def per_second(value: float | None) -> str:
    """Packets, errors or drops per second."""
    if value is None:
        return "—"
    if value == 0:
        return "0"
    if value < 10:
        return f"{value:.1f}"
    return si(value, "").rstrip()


def size_bytes(value: int | None) -> str:
    """A byte total, binary-free SI (network people count in powers of ten): 1.23 GB, and
    below a kilobyte a whole number, "70 B" (a count of bytes has no fraction; a rate may)."""
    if value is None:
        return "—"
    if abs(value) < 999.5:
        return f"{round(value)} B"
    return si(float(value), "B")


def link_speed(mbps: int | None, words: bool = False) -> str:
    """Negotiated speed, compact for a cell (100M, 1G, 2.5G, 10G) or in ``words`` for a
    sentence (100 Mb/s, 1 Gb/s, 2.5 Gb/s): one number, two widths, no other spelling."""
    if mbps is None:
        return "—"
    number, prefix = (f"{mbps / 1000:g}", "G") if mbps >= 1000 else (str(mbps), "M")
    return f"{number} {prefix}b/s" if words else f"{number}{prefix}"


def mtu(value: int | None) -> str:
    return "—" if value is None else str(value)


def duplex(value: str | None, short: bool = False) -> str:
    """full / half (``short``: F / H); "—" when unknown."""
    if not value:
        return "—"
    return value[:1].upper() if short else value


def count(value: int | None) -> str:
    return "—" if value is None else str(value)


def sum_known(a: float | None, b: float | None) -> float | None:
    """a + b, where one unknown side counts as 0 and two unknown sides stay unknown."""
    if a is None and b is None:
        return None
    return (a or 0.0) + (b or 0.0)


def percent_cell(value: float | None) -> str:
    """A percentage whole in four characters, for a dashboard cell: "92%", "9.5%", "<1%", "0%";
    the exact figure is in ``percent`` (snapshot, the detail screen)."""
    if value is None or not math.isfinite(value):
        return "—"
    if value >= 9.5 or value == 0:
        return f"{value:.0f}%"
    if value >= 1:
        return f"{value:.1f}%"
    return "<1%"


def percent(value: float | None, signed: bool = False) -> str:
    """A percentage, the one way linkdeck writes them: "71%", "9.5%", "0.07%", "0.0025%",
    "<0.001%" (``signed``: "+1.2%", "-3.0%"); never "1e+02 %"."""
    if value is None or not math.isfinite(value):
        return "—"
    sign = "-" if value < 0 else "+" if signed else ""
    value = abs(value)
    if value >= 9.95 or value == 0:
        return f"{sign}{value:.0f}%"
    if value >= 0.995:
        return f"{sign}{value:.1f}%"
    if value < 0.001:
        return f"{sign}<0.001%"
    return f"{sign}{value:.2g}%"


def seconds(value: float | None) -> str:
    """A duration: "5.0 s", "0.25 s", "120 s" — never "5.00146 s"."""
    if value is None or not math.isfinite(value):
        return "—"
    if value >= 100:
        return f"{value:.0f} s"
    return f"{value:.1f} s" if value >= 1 else f"{value:.2f} s"


def age(value: float) -> str:
    """How long something has lasted, to the second while that matters: "45 s", "3 min 20 s",
    "2 h 05 min", "3 d 4 h"."""
    s = max(0, int(value))
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    d, h = divmod(h, 24)
    if d:
        return f"{d} d {h} h"
    if h:
        return f"{h} h {m:02d} min"
    return f"{m} min {s:02d} s" if m else f"{s} s"


def times(ratio: float) -> str:
    """How many times as much: "29×", "2.5×"."""
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def arrow(a: str, b: str) -> str:
    """A direction from one host to another, the one spelling: "a → b"."""
    return f"{a} → {b}"


def utilisation(rx_bps: float | None, tx_bps: float | None, speed: int | None, duplex: str | None) -> float | None:
    """Percent of the negotiated speed: max(rx, tx) on full duplex, rx + tx on half."""
    if not speed or speed <= 0 or rx_bps is None or tx_bps is None:
        return None
    capacity = speed * 1_000_000
    used = rx_bps + tx_bps if duplex == "half" else max(rx_bps, tx_bps)
    return 100.0 * used / capacity


def printable(text: str) -> str:
    """Remote text (interface names, descriptions) made safe for a terminal: control
    characters and escapes become visible \\xNN sequences instead of acting on the screen."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
