"""Block-character sparklines and graphs (pure text, no textual or rich)."""

from __future__ import annotations

from typing import Sequence

BARS = " ▁▂▃▄▅▆▇█"


def _bucket(values: Sequence[float | None], width: int) -> list[float | None]:
    """Squeeze the newest ``len(values)`` samples into ``width`` columns (max per column), so a
    short burst is never averaged away; columns with no sample yet stay empty on the left."""
    if width <= 0:
        return []
    per = max(1, -(-len(values) // width))
    out: list[float | None] = []
    end = len(values)
    while end > 0 and len(out) < width:
        chunk = [v for v in values[max(0, end - per) : end] if v is not None]
        out.append(max(chunk) if chunk else None)
        end -= per
    out.reverse()
    return [None] * (width - len(out)) + out


def spark(values: Sequence[float | None], width: int, top: float | None = None) -> str:
    """One line, scaled to ``top`` (or the largest value shown); unknown samples are blank."""
    cols = _bucket(values, width)
    peak = top if top else max((v for v in cols if v is not None), default=0.0)
    if not peak or peak <= 0:
        return "".join(" " if v is None else BARS[1] for v in cols)
    chars = []
    for v in cols:
        if v is None:
            chars.append(" ")
        else:
            level = min(8, max(1, round(8 * v / peak))) if v > 0 else 1
            chars.append(BARS[level])
    return "".join(chars)


def graph(values: Sequence[float | None], width: int, height: int, capacity: int = 60) -> tuple[list[str], float]:
    """A ``height``-line bar graph rescaled to the largest value shown; returns the lines
    (top first) and that peak, so the caller can label the axis. Wide screens draw each of
    the ``capacity`` samples over the whole width (some a column wider than others) rather
    than leave part of the graph empty; narrow ones keep each column's largest sample."""
    if capacity <= 0 or width < capacity:
        cols = _bucket(values, width)
    else:
        slots = _bucket(values, capacity)
        cols = [slots[j * capacity // width] for j in range(width)]
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
