"""The flows screen fits the terminal: at 80, 120 and 200 columns no line is wider than the
screen, the flow, its rates and its limiter stay, and a verdict wraps under itself.

The round is a real `ss -tin` capture of several flows (the corpus's mouse/elephant/jumbo
capture), each flow read as the host's flows loop prints it, with itself as the round before (constructed)."""

from __future__ import annotations

import pytest

from linkdeck.flows.round_report import report
from linkdeck.flows.sampler import RoundReader
from linkdeck.present.flow_words import HEAD
from linkdeck.ui.screens.flows_screen import render
from tests.corpus import fixture

MODERN = "ss/ss-tin__mouse-elephant-jumbo-cubic-iperf.txt"


def a_round():
    text = fixture(MODERN).splitlines()
    sockets = [a + " " + b for a, b in zip(text[1::2], text[2::2]) if b.startswith(("\t", " "))]
    reader = RoundReader()
    lines = ["@@LD FLOWS 100.50 101.50 9 " + str(len(sockets))]
    for s in sockets:
        lines += ["C " + s, "P " + s]
    for line in lines:
        reader.feed(line)
    got = reader.feed("@@LD FLOWS END")
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
