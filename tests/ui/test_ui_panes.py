"""What sits over and under the table, at 80x24 and 200x60 (issue 23): the command palette
names each command's key, the help's and the findings pane's scrollbars read as scrollbars,
and the findings pane says when each finding was raised and keeps one interface's findings
together."""

from __future__ import annotations

import datetime as dt

import pytest
from rich.color import Color
from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.containers import VerticalScroll

from linkdeck.core.model import Finding, Severity
from linkdeck.ui.bindings import APP_KEYS, key_label
from linkdeck.ui.screens.help_screen import HelpScreen
from linkdeck.ui.widgets.findings_pane import FindingsPane
from tests.lab import wait_for
from tests.ui.test_ui_snapshot import FINDINGS, feed_five, five_host_app

SIZES = [(80, 24), (200, 60)]
SIZE_IDS = ["80x24", "200x60"]
T0 = 1_790_000_000.0  # the app's clock in these tests (a fixed wall-clock time)

# Constructed in the words the two rules print for seed 003's kind of host: a spare interface
# at MTU 9000 in the 1500 subnet the host's other interface (its session) sits in.
MTU = Finding(
    "MTU_MISMATCH",
    Severity.ERROR,
    "nas01",
    "igb0",
    "igb0 uses MTU 9000 in 10.0.10.0/24, which carries 1500",
    "largest packet through with don't-fragment between nas01 and web1: "
    "1500 bytes; MTUs in 10.0.10.0/24: nas01 igb0 9000; web1 enp3s0f0 1500",
    "the subnet carries 1500: nas01 igb0 at 9000 lose every large frame; "
    "set them to 1500 (`ifconfig igb0 mtu 1500`) or raise the switch to 9000",
)
TWO = Finding(
    "TWO_IFACES_ONE_SUBNET",
    Severity.ERROR,
    "nas01",
    "igb0",
    "nas01 has 2 interfaces in 10.0.10.0/24 with different MTUs",
    "vlan10 1500, igb0 9000 in 10.0.10.0/24",
    "keep one interface per subnet: unplug or unaddress igb0, or move it to another subnet; "
    "keep vlan10: it carries linkdeck's session",
)
RAISED = {
    MTU: T0 - 200,
    TWO: T0 - 200,
    FINDINGS[0]: T0 - 45,
    FINDINGS[1]: T0 - 3 * 3600 - 300,
    FINDINGS[2]: T0 - 3 * 3600 - 300,
}


class TimedFindings:
    """The rules' findings as the Diagnoser lists them, each with when it was first raised."""

    def __init__(self, settings, **kwargs):
        pass

    def observe(self, update):
        pass

    def findings(self):
        return [FINDINGS[0], MTU, TWO, FINDINGS[1], FINDINGS[2]]  # newest first

    def since(self, finding):
        return RAISED[finding]


def text_of(renderable, width: int) -> str:
    console = Console(width=width, color_system=None)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def hms(at: float) -> str:
    return dt.datetime.fromtimestamp(at).strftime("%H:%M:%S")


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_palette_names_each_commands_key(monkeypatch, size):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.press("ctrl+p")
        await wait_for(lambda: isinstance(app.screen, CommandPalette), 5.0, message="the palette")
        commands = app.screen.query_one(CommandList)
        await wait_for(lambda: commands.option_count > 0, 5.0, message="the commands listed")
        await pilot.pause()
        prompts = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
        listed = "\n".join(prompts)
        for key in APP_KEYS:
            named = f"{key.description} ({key_label(key.key)})"
            assert (named in listed) == key.palette, (named, prompts)
        assert "Sort (s)" in listed and "Filter (/)" in listed and "Findings (f)" in listed
        assert "Quit" not in prompts  # Textual's own, beside ours: listed once
        # typed words still find the command, and it still runs
        await pilot.press(*"sort")
        await wait_for(
            lambda: any(
                "Sort (s)" in str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)
            ),
            5.0,
            message="sort found",
        )
        await pilot.press("enter")
        await wait_for(lambda: app.view.sort == "rx", 5.0, message="the sort ran")


def assert_reads_as_a_scrollbar(scroll: VerticalScroll, app) -> None:
    """A one-cell thumb on a track of its own colour, neither of them a sparkline's colour nor
    the background's, so the thumb is not read as one more bar of a graph."""
    styles = scroll.styles
    assert scroll.show_vertical_scrollbar and scroll.max_scroll_y > 0
    assert styles.scrollbar_size_vertical == 1
    track, thumb, behind = styles.scrollbar_background, styles.scrollbar_color, scroll.background_colors[1]
    assert track != behind and track.a > 0 and abs(track.brightness - behind.brightness) > 0.05, (track, behind)
    assert thumb != track and abs(thumb.brightness - track.brightness) > 0.1, (thumb, track)
    for spark in ("cyan", "magenta"):  # the graphs' colours (marks.SPARK_RX / SPARK_TX)
        rgb = Color.parse(spark).get_truecolor()
        assert (thumb.r, thumb.g, thumb.b) != (rgb.red, rgb.green, rgb.blue)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_help_and_findings_scrollbars_have_a_visible_track(monkeypatch, size):
    app = five_host_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen), 5.0, message="the help")
        await pilot.pause()
        assert_reads_as_a_scrollbar(app.screen.query_one(VerticalScroll), app)
        await pilot.press("escape")
        await pilot.press("f")
        pane = app.query_one(FindingsPane)
        # more findings than the pane has lines, at either size
        many = [
            Finding(f"CODE_{i}", Severity.WARNING, "web1", f"eth{i}", f"message {i}", f"evidence {i}", f"hint {i}")
            for i in range(20)
        ]
        pane.show(many, lambda f: None, T0)
        await wait_for(lambda: pane.max_scroll_y > 0, 5.0, message="the pane scrolls")
        await pilot.pause()
        assert_reads_as_a_scrollbar(pane, app)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_findings_pane_says_when_each_was_raised_and_groups_one_interface(monkeypatch, size):
    import linkdeck.findings.engine

    app = five_host_app(monkeypatch)
    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", TimedFindings)
    app.reset()  # the app's Diagnoser is made in reset: this one
    now = [T0]
    app.clock = lambda: now[0]
    async with app.run_test(size=size) as pilot:
        await feed_five(app, pilot, steps=2)
        await pilot.press("f")
        pane = app.query_one(FindingsPane)
        body = pane.query_one("#findings-body")
        width = pane.scrollable_content_region.width
        text = await wait_for(
            lambda: "raised" in text_of(body.content, width) and text_of(body.content, width), 5.0, message="the pane"
        )
        flat = " ".join(text.split())
        # when, and for how long: the local time on the app's clock, the age to the second
        assert f"raised {hms(T0 - 45)}, up 45 s" in flat
        assert f"raised {hms(T0 - 200)}, up 3 min 20 s" in flat
        assert f"raised {hms(T0 - 3 * 3600 - 300)}, up 3 h 05 min" in flat
        # one interface's two findings are one entry: the interface once, then each of them
        assert "✖ ERROR nas01/igb0: 2 findings on this interface" in flat
        assert flat.count("nas01/igb0") == 1
        head = flat.index("nas01/igb0: 2 findings")
        assert (
            head
            < flat.index("✖ MTU_MISMATCH: igb0 uses MTU 9000")
            < flat.index("✖ TWO_IFACES_ONE_SUBNET: nas01 has 2 interfaces")
        )
        # so are igb1's half duplex and its speed below capability, under their worst severity
        assert "⚠ WARNING nas01/igb1: 2 findings on this interface" in flat and flat.count("nas01/igb1") == 1
        # a single finding reads as before, with its time; the entries stay newest first
        assert "✖ ERROR ERRORS_RISING web1/enp3s0f0: enp3s0f0: 3.0 receive errors/s" in flat
        assert (
            flat.index("ERRORS_RISING")
            < head
            < flat.index("nas01/igb1")
            < flat.index("⚠ HALF_DUPLEX:")
            < flat.index("⚠ SPEED_BELOW_CAPABILITY:")
        )
        # every line fits the pane: nothing drawn past its edge
        assert all(len(line.rstrip()) <= width for line in text.splitlines())
        # the age moves on with the clock
        now[0] = T0 + 10
        await feed_five(app, pilot, steps=1)
        await wait_for(
            lambda: "up 55 s" in " ".join(text_of(body.content, width).split()), 5.0, message="the age moved on"
        )


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_findings_pane_snapshot(snap_compare, monkeypatch, size):
    """The pane open under the table: the entries, their times, the grouped interface and the
    scrollbar's track, as they read at each size (local time pinned to UTC for the picture)."""
    import time

    import linkdeck.findings.engine

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    app = five_host_app(monkeypatch)
    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", TimedFindings)
    app.reset()
    app.clock = lambda: T0

    async def run_before(pilot):
        await feed_five(app, pilot, steps=60)
        await pilot.press("f")
        await wait_for(
            lambda: "raised" in text_of(app.query_one("#findings-body").content, 200), 5.0, message="the pane"
        )
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        monkeypatch.undo()
        time.tzset()
