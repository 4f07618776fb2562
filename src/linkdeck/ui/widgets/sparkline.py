"""Block-character sparklines and graphs (pure text, no textual or rich)."""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence, cast

BARS = " ▁▂▃▄▅▆▇█"
# A sparkline of an interface whose speed is unknown is scaled to its host's busiest rate of the
# last minute, never below this: chatter on an idle veth stays a baseline, not a full bar.
SPARK_FLOOR_BPS = 1e6
SPARK_MAX_CELLS = 60  # per direction: wider than one cell per sample of the minute shows nothing more


GRAPH_SCALES = ("peak", "link")  # what a full cell means: the interface's own busiest sample, or its link speed


def spark_top(
    speed_mbps: int | None, host_peak_bps: float | None, own_peak_bps: float | None = None, scale: str = "link"
) -> float:
    """What a full sparkline cell means. ``link``: the link's speed when known; otherwise the
    busiest rate any interface of the host carried over the graphs' span. ``peak``: the
    interface's own busiest rate over the span, so any traffic shows as bars as the interface
    screen's graph does. Never below SPARK_FLOOR_BPS, so chatter stays a baseline."""
    if scale == "peak":
        return max(SPARK_FLOOR_BPS, own_peak_bps or 0.0)
    if speed_mbps:
        return speed_mbps * 1e6
    return max(SPARK_FLOOR_BPS, host_peak_bps or 0.0)


@lru_cache(maxsize=256)
def _columns(width: int, capacity: int) -> tuple[tuple[int, int], ...]:
    """Each of ``width`` columns' slice of ``capacity`` slots (_bucket)."""
    return tuple((j * capacity // width, (j + 1) * capacity // width) for j in range(width))


def _bucket(values: Sequence[float | None], width: int, capacity: int = 0) -> list[float | None]:
    """The newest ``capacity`` samples (fewer sit on the right, where the newest belong) spread
    over ``width`` columns: wider, each sample one or more columns; narrower, each column the
    largest of its samples, so a short burst is never averaged away."""
    if width <= 0:
        return []
    capacity = max(capacity, len(values), 1)
    pad = capacity - len(values)
    slots = [None] * pad + list(values[-capacity:])
    if width >= capacity:
        return [slots[a] for a, _ in _columns(width, capacity)]
    if None in values:
        out: list[float | None] = []
        for a, b in _columns(width, capacity):
            chunk = [v for v in slots[a:b] if v is not None]
            out.append(max(chunk) if chunk else None)
        return out
    # every sample known (a graph's usual case): a column is blank only left of the samples
    known = cast("list[float]", list(values))
    return [max(known[max(a - pad, 0) : b - pad]) if b > pad else None for a, b in _columns(width, capacity)]


def spark(values: Sequence[float | None], width: int, top: float | None = None, capacity: int = 0) -> str:
    """One line, scaled to ``top`` (or the largest value shown); unknown samples are blank."""
    cols = _bucket(values, width, capacity)
    peak = top if top else max((v for v in cols if v is not None), default=0.0)
    if not peak or peak <= 0:
        return "".join(" " if v is None else BARS[1] for v in cols)
    scale = 8 / peak
    return "".join(" " if v is None else BARS[min(8, max(1, round(scale * v))) if v > 0 else 1] for v in cols)


def graph(values: Sequence[float | None], width: int, height: int, capacity: int = 60) -> tuple[list[str], float]:
    """A ``height``-line bar graph rescaled to the largest value shown; returns the lines
    (top first) and that peak, so the caller can label the axis. Wide screens draw each of
    the ``capacity`` samples over the whole width (some a column wider than others) rather
    than leave part of the graph empty; narrow ones keep each column's largest sample."""
    cols = _bucket(values, width, capacity)
    peak = max((v for v in cols if v is not None), default=0.0)
    lines = []
    for row in range(height - 1, -1, -1):
        chars = []
        for v in cols:
            if v is None or peak <= 0:
                chars.append(" ")
                continue
            eighths = 8 * height * v / peak - 8 * row  # how much of this cell is filled
            chars.append(BARS[min(8, max(0, round(eighths)))] if eighths > 0 else " ")
        lines.append("".join(chars))
    return lines, peak
