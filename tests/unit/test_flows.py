"""The per-flow view: ss's tcp_info read in every iproute2 era (real captures), the remote
round format, the limiter rules and their words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linkdeck.core.tcpflow import FlowRecord, split_endpoint
from linkdeck.flows.judge import EndLink, Limiter, Why, judge
from linkdeck.flows.sampler import FlowsUnavailable, RoundReader, linux_script, no_flows_reason
from linkdeck.parsers import ParseError, registry, ss_tcp
from linkdeck.present.flow_words import flow_json, verdict
from tests.corpus import fixture

MODERN = "ss/ss-tin__mouse-elephant-jumbo-cubic-iperf.txt"


def test_modern_ss_gives_every_field_the_limiter_needs():
    flows = ss_tcp.parse(fixture(MODERN))
    assert len(flows) == 13
    f = flows[0]
    assert (f.local, f.remote, f.cc) == ("10.0.1.29:42314", "10.0.1.37:5201", "cubic")
    assert (f.rtt_ms, f.min_rtt_ms, f.cwnd, f.mss, f.pmtu) == (3.579, 0.228, 45, 8949, 9001)
    assert (f.bytes_acked, f.bytes_retrans, f.segs_out, f.retrans_total) == (50394960214, 2122510, 5762766, 244)
    assert (f.busy_ms, f.rwnd_limited_ms, f.sndbuf_limited_ms) == (438588, 433148, 0)
    assert f.delivery_rate_bps == 1011626080.0 and f.send_q == 3235770 and f.bytes_received == 0


def test_our_lab_capture_of_a_flow_behind_a_100_mbit_queue():
    (f,) = ss_tcp.parse(fixture("ss/ss-tinH-state-established__linkdeck-lab-tbf-100mbit-cubic.txt"))
    assert (f.local, f.remote, f.send_q) == ("10.77.20.11:54786", "10.77.20.12:43245", 1607280)
    assert (f.rtt_ms, f.min_rtt_ms, f.delivery_rate_bps, f.snd_wnd) == (58.493, 0.008, 95645152.0, 6235136)
    assert (f.busy_ms, f.rwnd_limited_ms, f.sndbuf_limited_ms, f.retrans_total) == (4016, 0, 0, 25)
    assert f.bytes_received == 0  # a modern ss prints it only once above zero


def test_bbr_bandwidth_and_lost_retransmits():
    flows = ss_tcp.parse(fixture("ss/ss-ein__cubic-bbr-lab-bbr-and-cubic.txt"))
    second = flows[1]
    assert (second.cc, second.bbr_bw_bps, second.retrans_total, second.min_rtt_ms) == ("bbr", 3747816.0, 386, 145.467)
    assert second.rwnd_limited_ms == 64 and second.busy_ms == 4040


def test_older_iproute2_leaves_what_it_does_not_print_unknown():
    (f,) = ss_tcp.parse(fixture("ss/ss-ti__magnate3-tcp-stack-md-older-iproute2.txt"))
    assert (f.local, f.remote) == ("192.168.112.135:ssh", "192.168.112.1:56505")
    assert (f.pmtu, f.min_rtt_ms, f.busy_ms, f.rwnd_limited_ms) == (None, None, None, None)
    assert (f.bytes_acked, f.bytes_received, f.rtt_ms) == (152109, 12047, 40.225)
    telegraf = ss_tcp.parse(fixture("ss/ss-in-tcp__telegraf-socketstat-testdata.txt"))
    assert [t.bytes_received for t in telegraf][:1] == [532644751]


def test_one_line_output_and_busy_absent_on_a_modern_kernel_means_zero():
    (f,) = ss_tcp.parse(fixture("ss/ss-tnpOHoemi__netdev-2025-rfc-zero-window-receiver.txt"))
    assert (f.bytes_received, f.snd_wnd, f.busy_ms, f.rwnd_limited_ms) == (392784, 64256, 0, 0)


def test_a_cut_socket_line_is_one_clear_error():
    with pytest.raises(ParseError, match="expected a socket line"):
        ss_tcp.parse(fixture("ss/ss-iet-dst__magnate3-bbr-rtt-readme-ecn-partial.txt"))


def test_registered_for_the_command_linkdeck_runs():
    entry = registry.find("linux", "ss -tinH state established")
    assert entry is not None and entry.parse is ss_tcp.parse
    assert registry.find("freebsd", "ss -tinH state established") is None


@pytest.mark.parametrize(
    "endpoint, split",
    [
        ("10.0.0.1:22", ("10.0.0.1", "22")),
        ("[fe80::1%eth0]:5201", ("fe80::1", "5201")),
        ("[::ffff:127.0.0.1]:5201", ("127.0.0.1", "5201")),
        ("192.168.112.135:ssh", ("192.168.112.135", "ssh")),
    ],
)
def test_endpoints(endpoint, split):
    assert split_endpoint(endpoint) == split


# --- the remote rounds -------------------------------------------------------------------


def _socket(line: str) -> str:
    return " ".join(line.split())


def test_a_round_pairs_each_flow_with_its_previous_read():
    text = fixture(MODERN).splitlines()
    cur = _socket(text[1] + " " + text[2])
    prev = cur.replace("bytes_acked:50394960214", "bytes_acked:50294960214").replace("busy:438588ms", "busy:437588ms")
    reader = RoundReader()
    lines = ["@@LD FLOWS 100.50 101.50 9 1", "C " + cur, "P " + prev, "C junk", "@@LD FLOWS END"]
    got = [reader.feed(line) for line in lines]
    assert got[:-1] == [None] * 4
    r = got[-1]
    assert (r.time, r.prev_time, r.total) == (101.5, 100.5, 9)
    ((c, p),) = r.flows
    assert c.bytes_acked - p.bytes_acked == 100_000_000 and c.busy_ms - p.busy_ms == 1000
    assert len(r.errors) == 1 and "expected a socket line" in r.errors[0]
    first = RoundReader()
    for line in ["@@LD FLOWS - 5.0 1 1", "C " + cur]:
        first.feed(line)
    assert first.feed("@@LD FLOWS END").prev_time is None


def test_a_host_without_ss_says_what_to_install():
    with pytest.raises(FlowsUnavailable, match="apt install iproute2"):
        RoundReader().feed("@@LD FLOWS-MISSING ss")


def test_the_script_is_fixed_text_with_quoted_values():
    script = linux_script(0.5, 10, ["10.0.0.1", "fe80::1%eth0"])
    assert "!" not in script and "\\" not in script and "\n" not in script
    assert "-v n=10 -v only=' 10.0.0.1 fe80::1 '" in script and "sleep 0.50" in script
    with pytest.raises(ValueError):
        linux_script(1, 10, ["10.0.0.1; rm -rf /"])
    with pytest.raises(ValueError):
        linux_script(1, 100000)


def test_os_without_a_per_flow_view_says_why():
    assert no_flows_reason("linux") is None
    assert "netstat -T" in no_flows_reason("freebsd") and "netstat -T" in no_flows_reason("macos")
    assert no_flows_reason("windows") == "no per-flow reader for OS windows"


# --- the limiter -------------------------------------------------------------------------

BASE = FlowRecord(
    "10.0.0.1:40000",
    "10.0.0.2:5201",
    cc="cubic",
    rtt_ms=0.3,
    min_rtt_ms=0.2,
    cwnd=40,
    pmtu=1500,
    bytes_acked=0,
    bytes_received=1000,
    segs_out=0,
    busy_ms=0,
    rwnd_limited_ms=0,
    sndbuf_limited_ms=0,
)


def _after(prev: FlowRecord, s: float = 1.0, mbit: float = 100, **changes) -> FlowRecord:
    """``prev`` ``s`` seconds later, having sent ``mbit`` Mbit/s, busy the whole time."""
    sent = int(mbit * 1e6 / 8 * s)
    base = dict(
        bytes_acked=prev.bytes_acked + sent, segs_out=prev.segs_out + sent // 1448, busy_ms=prev.busy_ms + int(s * 1000)
    )
    base.update(changes)
    return replace(prev, **base)


GIG_A = EndLink("a", "eth0", 1500, 1000, 0.0)
GIG_B = EndLink("b", "eth0", 1500, 1000, 0.0)


def test_a_queue_in_front_of_a_narrow_point_between_two_gigabit_links_is_the_network():
    cur = _after(BASE, mbit=96, rtt_ms=2.855, min_rtt_ms=0.058, bbr_bw_bps=95979488.0, cc="bbr")
    flow = judge(cur, BASE, 1.0, GIG_A, GIG_B, "b")
    assert (flow.limiter, flow.why) == (Limiter.NETWORK, Why.QUEUE)
    assert flow.tx_bps == pytest.approx(96e6) and flow.busy_pct == 100
    said, evidence = verdict(flow)
    assert said == (
        "a queue builds in front of a bottleneck near 96.0 Mb/s (BBR's estimate); "
        "both ends' links are 1 Gb/s, so the narrow point is between them"
    )
    assert evidence.startswith("RTT 2.85 ms (floor 0.06 ms); retransmits 0% of segments")


def test_loss_without_a_queue_is_the_network_and_names_the_drops():
    cur = _after(BASE, mbit=300, retrans_total=300, delivery_rate_bps=3e8)
    flow = judge(cur, BASE, 1.0, replace(GIG_A, drops_ps=40.0), None, None)
    assert (flow.limiter, flow.why) == (Limiter.NETWORK, Why.LOSS) and flow.retrans == 300
    assert flow.retrans_pct == pytest.approx(300 / (int(300e6 / 8) // 1448) * 100)
    said, evidence = verdict(flow)
    assert "this end's link (a eth0) is 1 Gb/s, so the narrow point is beyond it (the other end is not watched)" in said
    assert evidence.endswith("a eth0 drops 40/s")


def test_the_receivers_window_most_of_the_busy_time_is_the_receiver():
    cur = _after(BASE, mbit=20, rwnd_limited_ms=900, snd_wnd=65536, rtt_ms=25.0)
    flow = judge(cur, BASE, 1.0, GIG_A, GIG_B, "b")
    assert (flow.limiter, flow.rwnd_limited_pct) == (Limiter.RECEIVER, 90.0)
    said, evidence = verdict(flow)
    assert said.startswith(
        "the receiver's window caps this flow at about 64 KB / 25 ms = 21.0 Mb/s: a receiving application"
    )
    assert evidence.startswith("receive-window limited 90% of its busy time")


def test_a_real_window_limited_flow_over_its_life():
    flow = judge(ss_tcp.parse(fixture(MODERN))[0], None, None)
    assert (flow.limiter, flow.tx_bps, round(flow.rwnd_limited_pct, 1)) == (Limiter.RECEIVER, None, 98.8)


def test_the_send_buffer_is_the_sender():
    flow = judge(_after(BASE, sndbuf_limited_ms=700), BASE, 1.0)
    assert flow.limiter is Limiter.SENDER and "SO_SNDBUF" in verdict(flow)[0]


def test_a_path_mtu_below_both_ends_mtu():
    cur = _after(BASE, pmtu=1400)
    flow = judge(cur, BASE, 1.0, GIG_A, GIG_B, "b")
    assert flow.limiter is Limiter.PATH_MTU
    assert verdict(flow)[1] == "path MTU 1400; a eth0 MTU 1500, b eth0 MTU 1500"
    assert judge(cur, BASE, 1.0, GIG_A, replace(GIG_B, mtu=1400), "b").limiter is Limiter.APPLICATION


def test_a_clean_busy_flow_and_an_idle_one_are_the_application():
    flow = judge(_after(BASE, mbit=900), BASE, 1.0, GIG_A, GIG_B, "b")
    assert (flow.limiter, flow.why) == (Limiter.APPLICATION, Why.CLEAR)
    assert verdict(flow)[0] == "the application is not sending faster; the network is not the limit"
    idle = judge(_after(BASE, mbit=0.01, busy_ms=3), BASE, 1.0)
    assert (idle.limiter, idle.why) == (Limiter.APPLICATION, Why.IDLE)
    bursty = judge(_after(BASE, mbit=50, busy_ms=200, rtt_ms=9.0), BASE, 1.0)
    assert (bursty.limiter, bursty.why) == (Limiter.APPLICATION, Why.NOT_BUSY)


def test_never_a_guess():
    old = replace(BASE, busy_ms=None, rwnd_limited_ms=None, sndbuf_limited_ms=None)
    flow = judge(replace(old, bytes_acked=10_000_000, rtt_ms=30.0), old, 1.0)
    assert flow.limiter is Limiter.UNKNOWN and "does not report" in verdict(flow)[0]
    receiving = judge(replace(BASE, bytes_received=50_000_000), BASE, 1.0, remote_host="b")
    assert receiving.limiter is Limiter.UNKNOWN and "`linkdeck flows b`" in verdict(receiving)[0]
    new = judge(_after(BASE, rtt_ms=30.0), None, None)
    assert (new.limiter, new.tx_bps) == (Limiter.UNKNOWN, None)


def test_a_reused_four_tuple_gives_no_negative_rate():
    flow = judge(replace(BASE, bytes_acked=10), replace(BASE, bytes_acked=10_000_000), 1.0)
    assert flow.tx_bps is None


def test_json_has_the_documented_fields():
    doc = flow_json(judge(_after(BASE, mbit=96, rtt_ms=3.0, min_rtt_ms=0.1), BASE, 1.0, GIG_A, GIG_B, "b"))
    assert {
        "local",
        "remote",
        "remote_host",
        "tx_bps",
        "rx_bps",
        "rtt_ms",
        "min_rtt_ms",
        "cwnd",
        "retrans_pct",
        "pmtu",
        "rwnd_limited_pct",
        "sndbuf_limited_pct",
        "limiter",
        "verdict",
        "evidence",
    } <= set(doc)
    assert (doc["limiter"], doc["remote_host"], doc["rwnd_limited_pct"]) == ("network", "b", 0.0)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_no_per_flow_view_puts_data_on_stdout_and_the_reason_on_stderr(capsys, as_json) -> None:
    import json

    from linkdeck.commands.flows import emit
    from linkdeck.flows.round_report import FlowReport

    why = no_flows_reason("freebsd")
    assert why
    code = emit(FlowReport("nas01", None, None, None, 0, unavailable=why), as_json, 10)
    out, err = capsys.readouterr()
    assert code == 1
    assert err == f"linkdeck: nas01: no per-flow view: {why}\n"
    assert "no per-flow view" not in out and out.strip()
    if as_json:
        assert json.loads(out)["unavailable"] == why
