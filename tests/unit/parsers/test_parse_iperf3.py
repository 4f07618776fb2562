"""iperf3 -J documents and --json-stream events: corpus files and loopback captures made here
(tests/fixtures/iperf3/, 4-line header stripped)."""

import json

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.iperf3 import Iperf3Result, parse_json, parse_json_stream, parse_stream_line
from tests.corpus import fixture


def test_captured_bidir():
    r = parse_json(fixture("iperf3/captured-bidir.json"))
    assert (r.mode, r.protocol, r.version, r.num_streams, r.error) == ("bidir", "TCP", "3.12", 1, None)
    assert r.forward_sent_bps == pytest.approx(17289721510.886684)
    assert r.forward_received_bps == pytest.approx(16988086419.186161)
    assert r.reverse_sent_bps == pytest.approx(4592418448.616354)
    assert r.reverse_received_bps == pytest.approx(4580156833.93197)
    assert (r.forward_retransmits, r.reverse_retransmits) == (37, 3)
    assert r.forward_rtt_ms == pytest.approx(0.858) and r.reverse_rtt_ms == pytest.approx(0.020)
    assert r.rtt_ms == pytest.approx((0.858 + 0.020) / 2)
    assert r.cpu_local_pct == pytest.approx(78.54181528386755)
    assert r.cpu_remote_pct == pytest.approx(47.094721541708346)
    assert r.duration_s == pytest.approx(1.000075)
    assert [(s.socket, s.direction, s.retransmits) for s in r.streams] == [(5, "forward", 37), (7, "reverse", 3)]
    assert set(r.end) >= {"sum_sent_bidir_reverse", "sum_received_bidir_reverse"}


def test_captured_reverse_fills_reverse_only_and_remote_rtt_zero_is_unknown():
    r = parse_json(fixture("iperf3/captured-reverse.json"))
    assert r.mode == "reverse"
    assert r.forward_sent_bps is None and r.forward_received_bps is None and r.forward_retransmits is None
    assert r.reverse_received_bps == pytest.approx(18252530330.734417)
    assert r.reverse_retransmits == 11
    assert r.rtt_ms is None and r.streams[0].rtt_ms is None  # mean_rtt 0 from the remote sender
    assert r.streams[0].direction == "reverse"


def test_captured_parallel_streams():
    r = parse_json(fixture("iperf3/captured-forward-P2.json"))
    assert (r.mode, r.num_streams, len(r.streams)) == ("forward", 2, 2)
    assert r.forward_received_bps == pytest.approx(13470808340.27825)
    assert r.forward_retransmits == 1 and [s.retransmits for s in r.streams] == [1, 0]
    assert r.rtt_ms == pytest.approx((0.323 + 0.452) / 2)
    assert r.reverse_received_bps is None


def test_captured_bytes_mode_duration_is_measured_not_requested():
    r = parse_json(fixture("iperf3/captured-bytes.json"))
    assert r.mode == "forward"
    assert r.duration_s == pytest.approx(0.009699)  # test_start.duration is 0 with -n
    assert r.forward_sent_bps == pytest.approx(17297882255.90267)


def test_captured_udp_bidir_ignores_inconsistent_sender_flags():
    r = parse_json(fixture("iperf3/captured-udp-bidir.json"))
    assert (r.mode, r.protocol) == ("bidir", "UDP")
    # iperf 3.12 marks sum_sent_bidir_reverse "sender": true; the key decides the direction.
    assert r.reverse_received_bps == pytest.approx(100121386.63595207)
    assert r.forward_received_bps == pytest.approx(100121386.63595207)
    assert r.forward_retransmits is None and r.rtt_ms is None
    assert [s.direction for s in r.streams] == ["forward", "reverse"]


def test_captured_connection_refused():
    r = parse_json(fixture("iperf3/captured-refused.json"))
    assert r.error == "unable to connect to server: Connection refused"
    assert r.version == "3.12"
    assert r.forward_received_bps is None and r.reverse_received_bps is None and r.mode is None


def test_cloudpilot_bytes_mode_iperf_3_9():
    r = parse_json(fixture("iperf3/iperf3-J-tcp-bytes-mode__cloudpilot-small-file.txt"))
    assert r.version == "3.9"
    assert r.forward_sent_bps == pytest.approx(293115241.63568777)
    assert r.forward_received_bps == 0.0  # reported as such: the test was shorter than one RTT
    assert r.rtt_ms == pytest.approx(155.629)
    assert r.cpu_remote_pct == pytest.approx(0.0969302699385837)
    assert r.duration_s == pytest.approx(0.001076)


def test_plain_text_error_becomes_result_error():
    r = parse_json(fixture("iperf3/iperf3-text-error-connection-refused__esnet-iperf-issue-1751.txt"))
    assert r.error.startswith("unable to connect to server - server may have stopped running")
    assert r.error.endswith("Connection refused")
    assert parse_json("iperf3: unrecognized option '--bidir'\n").error == "unrecognized option '--bidir'"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "neither a JSON document"),
        ("hello", "neither a JSON document"),
        ("{not json", "not a JSON document"),
        ("{}", "no 'start', 'end' or 'error'"),
        ('{"end": {"sum_sent": {"bits_per_second": "fast"}}}', "'bits_per_second' is not a non-negative number"),
        ('{"end": {"sum_sent": []}}', "'sum_sent' is not an object"),
        ('{"end": {"streams": {}}}', "end.streams is not a list"),
        ('{"end": {"streams": [{"sender": {"mean_rtt": NaN}}]}}', "'mean_rtt' is not a non-negative number"),
        ('{"error": 5}', "'error' is not a string"),
    ],
)
def test_garbled_json(text, fragment):
    with pytest.raises(ParseError) as exc:
        parse_json(text)
    assert fragment in str(exc.value)


# ---------------------------------------------------------------- --json-stream


def test_stream_error_event_server_busy():
    p = parse_json_stream(fixture("iperf3/iperf3-json-stream-error-server-busy__omnt-issue-34.txt").splitlines())
    assert p.intervals == ()
    assert p.result.error == "the server is busy running a test. try again later"


def test_stream_bidir_interval():
    p = parse_json_stream(fixture("iperf3/iperf3-json-stream-tcp-bidir-interval__omnt-docs.txt").splitlines())
    assert p.result is None
    (iv,) = p.intervals
    assert iv.forward_bps == pytest.approx(31473171298.031265)
    assert iv.reverse_bps == pytest.approx(29513829576.759514)
    assert (iv.forward_retransmits, iv.reverse_retransmits) == (0, None)
    assert (iv.start_s, iv.end_s, iv.omitted) == (0.0, pytest.approx(1.000228), False)
    # the client's sending stream: RTT 34 µs, cwnd 1309660 bytes (the receiving one has none)
    assert (iv.rtt_ms, iv.cwnd_bytes) == (pytest.approx(0.034), 1309660)


def test_stream_reverse_interval_goes_to_reverse():
    line = fixture("iperf3/iperf3-json-stream-tcp-reverse-interval__omnt-docs.txt").strip()
    iv = parse_stream_line(line)
    assert iv.forward_bps is None and iv.reverse_bps == pytest.approx(31014008842.011257)
    assert (iv.rtt_ms, iv.cwnd_bytes) == (None, None)  # -R: the client sends nothing


def test_stream_udp_bidir_interval():
    (iv,) = parse_json_stream(
        fixture("iperf3/iperf3-json-stream-udp-bidir-interval__omnt-docs.txt").splitlines()
    ).intervals
    assert iv.forward_bps == pytest.approx(1081247.7156053118) and iv.reverse_bps == pytest.approx(1081247.7156053118)


def test_stream_whole_run_rebuilt_from_a_captured_document():
    doc = json.loads(fixture("iperf3/captured-bidir.json"))
    lines = [json.dumps({"event": "start", "data": doc["start"]})]
    lines += [json.dumps({"event": "interval", "data": iv}) for iv in doc["intervals"]]
    lines.append(json.dumps({"event": "end", "data": doc["end"]}))
    p = parse_json_stream(lines)
    assert len(p.intervals) == len(doc["intervals"]) == 1
    assert p.intervals[0].forward_bps == pytest.approx(17289721810.959675)
    assert p.result == parse_json(fixture("iperf3/captured-bidir.json"))


def test_stream_other_events_and_garbage():
    assert parse_stream_line('{"event": "start", "data": {}}') is None
    with pytest.raises(ParseError, match="not a JSON event line"):
        parse_json_stream(["{", ""])
    with pytest.raises(ParseError, match="expected"):
        parse_stream_line('{"data": 1}')
    text_error = parse_json_stream(["iperf3: error - unable to connect to server: Connection refused"])
    assert text_error.result.error == "unable to connect to server: Connection refused"


def test_result_is_frozen():
    r = Iperf3Result(forward_received_bps=1.0)
    with pytest.raises(AttributeError):
        r.forward_received_bps = 2.0  # type: ignore[misc]


def test_registry_on_every_os_family():
    for os_name in ("linux", "freebsd", "smartos", "macos"):
        entry = registry.find(os_name, "iperf3 -c 192.0.2.1 -p 5201 --bidir -J -t 5")
        assert entry is not None
        assert entry.parse(fixture("iperf3/captured-bidir.json"), os_name).forward_retransmits == 37
    stream = registry.find("linux", "iperf3 -c h --json-stream -t 20")
    assert stream.parse(
        fixture("iperf3/iperf3-json-stream-error-server-busy__omnt-issue-34.txt"), "linux"
    ).result.error.startswith("the server is busy")
    assert registry.find("linux", "iperf3 -c h -t 5") is None  # text output is not parsed
