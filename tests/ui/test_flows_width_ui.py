"""The flows screen fits the terminal: at 80, 120 and 200 columns no line is wider than the
screen, the flow, its rates and its limiter stay, and a verdict wraps under itself; in the app,
live and in a replay, at 80x24, 120x40 and 200x60 the screen draws its text as laid out for the
width it has once a scrollbar took its columns.

The round is a real `ss -tin` capture of several flows (the corpus's mouse/elephant/jumbo
capture), each flow read as the host's flows loop prints it, with itself as the round before (constructed)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from textual.widgets import Static

from linkdeck.flows.round_report import report
from linkdeck.flows.sampler import RoundReader
from linkdeck.present.flow_words import HEAD
from linkdeck.settings.config import HostSpec
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.screens.flows_screen import FlowsRead, FlowsScreen, render
from linkdeck.ui.screens.recorded_flows_screen import RecordedFlowsScreen, recorded_view
from tests.corpus import fixture
from tests.lab import wait_for
from tests.synthetic import SyntheticAdapter, opener_for, physical
from tests.ui.test_ui_app import FAST

MODERN = "ss/ss-tin__mouse-elephant-jumbo-cubic-iperf.txt"


def round_lines() -> list[str]:
    text = fixture(MODERN).splitlines()
    sockets = [a + " " + b for a, b in zip(text[1::2], text[2::2]) if b.startswith(("\t", " "))]
    lines = ["@@LD FLOWS 100.50 101.50 9 " + str(len(sockets))]
    for s in sockets:
        lines += ["C " + s, "P " + s]
    return [*lines, "@@LD FLOWS END"]


def a_round():
    reader = RoundReader()
    for line in round_lines():
        got = reader.feed(line)
    return report("web1", got, {})


@pytest.mark.parametrize("width", [76, 116, 196])
def test_the_flows_screen_fits_its_width_and_wraps_under_itself(width):
    got = a_round()
    assert got.flows, "the capture's flows were read"
    lines = render(got, width=width).plain.splitlines()
    assert max(len(line) for line in lines) <= width
    header = next(line for line in lines if line.startswith("local"))
    for kept in ("local", "remote", "out", "in", "limiter"):
        assert kept in header.split()
    if width >= 196:
        assert header.split() == [w for h in HEAD for w in h.split()]  # everything, on a wide screen
    if width < 100:
        assert "left out; wider shows them" in "\n".join(lines)  # said, never silently cut
    # each flow's verdict: its first line at column 0, what wraps indented under it
    verdicts = [i for i, line in enumerate(lines) if "→" in line and ":" in line and not line.startswith(" ")]
    assert verdicts
    for i in verdicts:
        j = i + 1
        while (
            j < len(lines)
            and lines[j]
            and not lines[j].startswith(("local", "unreadable", "Esc"))
            and j not in verdicts
        ):
            assert lines[j].startswith("    "), lines[j]
            j += 1


async def drawn_as_laid_out(pilot, body: Static, layout) -> None:
    """The body's lines as drawn equal ``layout(width)``'s at the width it ended up with: nothing
    wrapped again by the widget (a scrollbar takes two columns a frame after the text is drawn,
    so the width must hold across a pause first)."""
    before = None

    async def held() -> bool:
        nonlocal before
        await pilot.pause()
        now = body.content_size.width, body.size.height
        steady, before = now == before, now
        return steady

    await wait_for(held, 10.0, message="a steady width")
    width = body.content_size.width
    drawn = [body.render_line(y).text.rstrip() for y in range(body.size.height)]
    assert drawn == [line.rstrip() for line in layout(width).plain.splitlines()], width


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_flows_screen_draws_its_round_as_laid_out_live_and_in_a_replay(size):
    got = a_round()
    app = LinkdeckApp(
        FAST,
        [HostSpec("web1", address="web1.invalid")],
        opener=opener_for({"web1": SyntheticAdapter([physical("eth0")])}),
    )
    async with app.run_test(size=size) as pilot:
        live = FlowsScreen("web1", None, 3600)  # one answer (no per-flow view), then the capture's round
        await app.push_screen(live)
        body = live.query_one("#flows-body", Static)
        await wait_for(lambda: "reading its TCP flows" not in str(body.render()), 10.0, message="the first answer")
        live.post_message(FlowsRead(got))
        await wait_for(lambda: live.last is got, 10.0, message="the round")
        await drawn_as_laid_out(pilot, body, lambda width: render(got, width=width))
        await pilot.press("escape")
        # a replay's w: the same round as a recording keeps it (a stand-in player, constructed)
        player = SimpleNamespace(
            flows={"web1": {"h": "web1", "t": 1000.0, "lines": round_lines()}},
            tracks={},
            now=1000.5,
            settings=SimpleNamespace(interval=1.0),
        )
        app.replay = SimpleNamespace(player=player)
        replayed = RecordedFlowsScreen("web1", None)
        await app.push_screen(replayed)
        body = replayed.query_one("#flows-body", Static)
        await wait_for(lambda: "recorded at" in str(body.render()), 10.0, message="the recorded round")
        await drawn_as_laid_out(pilot, body, lambda width: recorded_view(player, "web1", width))


def a_moving_round():
    """The capture's round with a constructed round before it, 2 GB less sent, acked and
    received on every flow: rates, RTTs and their units in the verdicts."""

    def earlier(line: str) -> str:
        return re.sub(
            r"(bytes_(?:acked|sent|received)):(\d+)", lambda m: f"{m[1]}:{max(0, int(m[2]) - 2_000_000_000)}", line
        )

    reader = RoundReader()
    for line in round_lines():
        got = reader.feed(earlier(line) if line.startswith("P ") else line)
    return report("web1", got, {})


def test_a_flows_verdict_never_splits_a_figure_from_its_unit():
    """Wrapped at any width, "17.0 Gb/s" or "0.44 ms" stays on one line, as on every other page
    linkdeck lays out (present/fit.py)."""
    got = a_moving_round()
    assert " ms (floor " in render(got, width=196).plain  # figures with their units to wrap
    split = []
    for width in range(40, 200):
        lines = render(got, width=width).plain.splitlines()
        split += [
            (width, a, b)
            for a, b in zip(lines, lines[1:])
            if re.search(r"\d$", a) and re.match(r"\s*[kKMGT]?(?:b/s|B\b|bytes|ms\b|s\b)", b)
        ]
    assert split == []
