"""Flows in recordings: the flows screen's rounds written as "flows" events (the lines as the
host printed them), read back through the same parser and judge by a replay, carried over a
checkpoint, and listed by the report per host with their limiter, verdict and evidence. The
round is built from our lab capture of a flow behind a 100 Mbit/s queue (the running totals of
the round before are that capture's, moved back by one second of the flow's rate)."""

from __future__ import annotations

from linkdeck.commands.report_html import render_html, render_markdown
from linkdeck.flows.judge import Limiter
from linkdeck.flows.round_report import recorded, report
from linkdeck.flows.sampler import RoundReader, round_of
from linkdeck.recording.fileformat import read
from linkdeck.recording.recorder import CHECKPOINT_S, Recorder
from linkdeck.recording.replay import Player
from linkdeck.recording.timeline import build
from linkdeck.settings.config import Settings
from tests.builders import recording_file
from tests.corpus import fixture

LAB = "ss/ss-tinH-state-established__linkdeck-lab-tbf-100mbit-cubic.txt"


def lab_round(t: float) -> list[str]:
    """One round of the host's loop: the captured flow, and itself one second earlier."""
    first, info = fixture(LAB).splitlines()[:2]
    cur = " ".join((first + " " + info).split())
    prev = (
        cur.replace("bytes_acked:48098593", "bytes_acked:36098593")
        .replace("busy:4016ms", "busy:3016ms")
        .replace("segs_out:33728", "segs_out:25428")
    )
    return [f"@@LD FLOWS {t - 1:.3f} {t:.3f} 3 1", "C " + cur, "P " + prev, "@@LD FLOWS END"]


def read_round(lines: list[str]):
    reader = RoundReader()
    got = [reader.feed(line) for line in lines]
    return got[-1]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(tmp_path, rounds: list[float], gap: float = 1.0):
    clock = Clock()
    recorder = Recorder(
        tmp_path / "flows.ldrec", Settings(), [{"name": "e", "address": "e", "os": "linux", "os_detail": None}], clock
    )
    for t in rounds:
        clock.now = t
        recorder.flows("e", None, read_round(lab_round(t)).lines)
    clock.now += gap
    recorder.close()
    return read(tmp_path / "flows.ldrec")


def test_the_round_the_screen_showed_is_its_lines_as_the_host_printed_them():
    lines = lab_round(1001.0)
    got = read_round(lines)
    assert got.lines == tuple(lines)
    again = round_of(got.lines)
    assert again == got and again.lines == got.lines


def test_a_recorded_round_replays_to_the_same_flows_and_limiter(tmp_path):
    rec = record(tmp_path, [1001.0, 1002.0])
    events = [e for e in rec.events() if e["ev"] == "flows"]
    assert [e["h"] for e in events] == ["e", "e"] and events[0]["iface"] is None
    assert events[0]["lines"] == lab_round(1001.0)
    player = Player(rec)
    seen = []
    player.on_flows = seen.append
    player.advance_to(1001.5)
    assert player.flows["e"]["t"] == 1001.0 and len(seen) == 1  # only what was recorded by then
    player.advance_to(rec.end)
    assert player.flows["e"]["t"] == 1002.0 and len(seen) == 2
    got = recorded(player.flows["e"], {})
    live = report("e", read_round(lab_round(1002.0)), {})
    assert got.flows == live.flows and got.received == 1002.0
    (flow,) = got.flows
    assert flow.limiter is Limiter.NETWORK  # RTT 58.5 ms over a 0.008 ms floor, busy the whole second
    assert flow.tx_bps == 12_000_000 * 8 and flow.retrans_pct is not None


def test_a_checkpoint_carries_the_last_round_to_a_jump(tmp_path):
    start = 1001.0
    rec = record(tmp_path, [start, start + CHECKPOINT_S + 5], gap=1.0)
    assert len(rec.checkpoints) == 2
    # the jump starts after the checkpoint: the round before it comes from the checkpoint's resume
    player = Player.at(rec, start + CHECKPOINT_S + 1, lead=0)
    assert player.flows["e"]["t"] == start
    assert recorded(player.flows["e"], {}).flows[0].limiter is Limiter.NETWORK


def test_an_old_recording_or_a_garbled_round_has_no_flows(tmp_path):
    path = recording_file(tmp_path, [{"t": 100.0, "ev": "state", "h": "a", "state": "live", "error": None}])
    player = Player(read(path))
    player.advance_to(player.recording.end)
    assert player.flows == {}
    text = render_markdown(build(read(path)))
    assert "TCP flows: none recorded (the flows screen, w, was not open on this host while recording)" in text
    assert round_of(["@@LD FLOWS 1 2 1 1", "C junk", 7, None]) is None  # no END: no round
    assert recorded({"t": 1.0, "ev": "flows", "h": "a", "lines": ["junk"]}, {}) is None


def test_the_report_lists_each_host_s_flows_with_limiter_verdict_and_evidence(tmp_path):
    rec = record(tmp_path, [1001.0, 1002.0, 1003.0])
    timeline = build(rec)
    text = render_markdown(timeline)
    assert "TCP flows: 3 reads from " in text and "(the whole host), 1 flows seen" in text
    head = "| flow | seen | reads | peak out | peak in | limiter | verdict | evidence |"
    assert head in text
    row = next(line for line in text.splitlines() if line.startswith("| 10.77.20.11:54786 → 10.77.20.12:43245 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "3" and cells[3] == "96.0 Mb/s"
    assert cells[5] == "network (3 of 3 reads)"
    assert cells[6].startswith("a queue builds in front of a bottleneck near 95.6 Mb/s (delivery rate)")
    assert cells[7].startswith("RTT 58 ms (floor 0.01 ms); retransmits")
    page = render_html(timeline)
    assert "<th>limiter</th>" in page and "<td>network (3 of 3 reads)</td>" in page


def test_a_flow_seen_in_one_first_read_only_says_so(tmp_path):
    clock = Clock()
    recorder = Recorder(
        tmp_path / "one.ldrec", Settings(), [{"name": "e", "address": "e", "os": "linux", "os_detail": None}], clock
    )
    lines = lab_round(1001.0)
    first = [lines[0].replace("1000.000", "-", 1), lines[1], lines[3]]  # the loop's first round: no round before
    recorder.flows("e", "eth0", read_round(first).lines)
    clock.now = 1002.0
    recorder.close()
    text = render_markdown(build(read(tmp_path / "one.ldrec")))
    assert "(through eth0), 1 flows seen" in text
    row = next(line for line in text.splitlines() if line.startswith("| 10.77.20.11:54786"))
    assert "| unknown (first read only) | new since the last read: judged at the next |" in row
