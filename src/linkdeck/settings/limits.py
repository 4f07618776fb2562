"""The ranges of the numbers a user sets, in the config file, on the command line or in a
recording's header, and their defaults where more than one module needs them.

The boundary checks every value through ``out_of_range`` once (config.py for the file and the
command line, recording/replay.py for a recording's settings); the code below trusts the typed
``Settings`` it gets. NaN and infinities fail every range; a whole-number setting refuses
fractions and booleans. The probe's templates take their limits from here too, since they
guard what reaches a remote shell.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Range:
    lo: float
    hi: float
    unit: str = ""
    whole: bool = False  # an integer setting
    noun: str = ""  # what the number is, when the message should say so ("a TCP port")

    def problem(self, value: object) -> str | None:
        """Why ``value`` cannot be in this range, or None when it can."""
        types = int if self.whole else (int, float)
        if (
            not isinstance(value, bool)
            and isinstance(value, types)
            and math.isfinite(value)
            and self.lo <= value <= self.hi
        ):
            return None
        lo, hi = _plain(self.lo), _plain(self.hi)
        if self.noun:
            return f"must be {self.noun} ({lo}-{hi}{self.unit}), not {value!r}"
        number = "a whole number" if self.whole else "a number"
        return f"must be {number} between {lo} and {hi}{self.unit}, not {value!r}"


def _plain(bound: float) -> str:
    """1600000, not 1.6e+06; 0.1 as 0.1."""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


# 1.6 Tb/s, beyond any Ethernet standard: a larger figure from a driver is garbage, and a
# larger [speed] override a typo.
MAX_SPEED_MBPS = 1_600_000
DEFAULT_IPERF3_PORT = 5201
DEFAULT_FACTS_EVERY = 10  # the slow facts every 10th tick (config.Settings; an adapter built bare)

RANGES: dict[str, Range] = {
    "interval": Range(0.1, 3600.0, " seconds"),
    "facts_every": Range(1, 1_000_000, " ticks", whole=True),
    "test_duration": Range(1.0, 600.0, " seconds"),
    # iperf3 -P: its own limit is 128 parallel streams
    "test_streams": Range(1, 128, whole=True, noun="a number of parallel streams"),
    "port": Range(1, 65535, whole=True, noun="a TCP port"),
    "speed_mbps": Range(1, MAX_SPEED_MBPS, whole=True, noun="a link speed in Mb/s"),
    "window_s": Range(1.0, 86400.0, " seconds"),
    "errors_per_s": Range(0.0, 1e9, " per second"),
    "drops_per_s": Range(0.0, 1e9, " per second"),
    "outlier_ratio": Range(0.0, 1.0),
    "prometheus_interval": Range(0.5, 3600.0, " seconds"),
    "prometheus_timeout": Range(0.5, 120.0, " seconds"),
}


def out_of_range(attr: str, value: object) -> str | None:
    """Why ``value`` cannot be setting ``attr`` (see RANGES), or None when it can."""
    return RANGES[attr].problem(value)


def unknown_key(key: str, known, where: str = "") -> str:
    """ "unknown key in [test]: did you mean 'time'? (known: …)": the closest known key when one
    is close (a typo), then every key that exists."""
    known = list(known)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f"unknown key{where}" + (f": did you mean {close[0]!r}?" if close else "") + f" (known: {', '.join(known)})"
