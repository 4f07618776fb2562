"""The report's rate charts shade when each test ran, so a rise is seen to be the test's own
traffic. The series here is constructed: 60 one-second points."""

from __future__ import annotations

import re

from linkdeck.commands.report_html import chart_svg
from linkdeck.recording.timeline import Series

T0 = 1_800_000_000.0


def series() -> Series:
    s = Series(step=0.0)
    for i in range(60):
        s.add(T0, T0 + i, 1e6 if 20 <= i < 30 else 1e3, 2e3, 0.0, 0.0)
    return s


def filled(svg: str) -> list[str]:
    # pygal draws a filled series as a path of class "line reactive" (the rates: "nofill")
    return re.findall(r'<path d="M([^"]*)" class="line reactive"', svg)


def test_each_test_window_is_a_shaded_box_and_none_without_tests() -> None:
    svg = chart_svg("h1 / eth0", series(), [(T0 + 18, T0 + 31), (T0 + 50, T0 + 100)])
    boxes = filled(svg)
    assert len(boxes) == 2  # the second clipped to the chart's end
    assert "a test ran" in svg
    assert filled(chart_svg("h1 / eth0", series())) == []
    assert "a test ran" not in chart_svg("h1 / eth0", series(), [(T0 - 100, T0 - 50)])  # outside the chart
