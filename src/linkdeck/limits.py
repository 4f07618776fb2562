"""The ranges of the numbers a user sets, in the config file or on the command line.

config.py checks both through ``out_of_range`` (NaN and infinities fail every range), and the
probe's templates take a test's duration limits from here.
"""

from __future__ import annotations

import math

RANGES: dict[str, tuple[float, float, str]] = {
    "interval": (0.1, 3600.0, " seconds"),
    "test_duration": (1.0, 600.0, " seconds"),
    "window_s": (1.0, 86400.0, " seconds"),
    "errors_per_s": (0.0, 1e9, " per second"),
    "drops_per_s": (0.0, 1e9, " per second"),
    "outlier_ratio": (0.0, 1.0, ""),
}


def out_of_range(attr: str, value: object) -> str | None:
    """Why ``value`` cannot be setting ``attr`` (see RANGES), or None when it can."""
    lo, hi, unit = RANGES[attr]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and lo <= value <= hi):
        return f"must be a number between {lo:g} and {hi:g}{unit}, not {value!r}"
    return None
