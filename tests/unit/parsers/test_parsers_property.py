"""Every registered parser (all OSes: parametrized over the registry, so parsers landing later
are covered too) on hostile input: arbitrary text, truncated and shuffled real outputs, lines
replaced by junk, and every other command's output. The only exception allowed is ParseError;
anything returned must have the shapes and units the model promises."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from linkdeck.core.kinds import Kind
from linkdeck.core.model import COUNTER_FIELDS, KINDS, Counters, IfaceRecord
from linkdeck.core.oses import OSES
from linkdeck.core.tcpflow import FlowRecord
from linkdeck.core.tcpstats import TCP_COUNTERS, TcpCounters
from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.iperf3 import Iperf3Progress, Iperf3Result

FIX = Path(__file__).parents[2] / "fixtures"
ENTRIES = registry.entries()


def _fixtures() -> dict[str, str]:
    out = {}
    for path in sorted(FIX.rglob("*")):
        if not path.is_file():
            continue
        try:
            lines = path.read_text().splitlines(True)
        except UnicodeDecodeError:
            continue
        if lines and lines[0].startswith("# source:"):
            out[str(path.relative_to(FIX))] = "".join(lines[4:])
    return out


FIXTURES = _fixtures()
TEXTS = list(FIXTURES.values())
PROPERTY = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _os_for(entry: registry.Entry) -> str:
    return next(name for name, facts in OSES.items() if name in entry.oses or facts.family in entry.oses)


def _id(entry: registry.Entry) -> str:
    return f"{entry.parse.__module__.rsplit('.', 1)[-1]}:{entry.pattern[:40]}"


def _check_record(rec: object) -> None:
    assert isinstance(rec, IfaceRecord), type(rec)
    assert isinstance(rec.name, str)
    assert rec.kind is None or (isinstance(rec.kind, Kind) and rec.kind in KINDS), rec.kind
    assert rec.duplex in (None, "full", "half"), rec.duplex
    for name in ("mtu", "carrier_changes", "ring_rx", "ring_rx_max", "ring_tx", "ring_tx_max"):
        value = getattr(rec, name)
        assert value is None or (isinstance(value, int) and value >= 0), (name, value)
    # Unknown speed is None, never 0 or a sentinel.
    assert rec.speed_mbps is None or (isinstance(rec.speed_mbps, int) and 0 < rec.speed_mbps < 4294967295), (
        rec.speed_mbps
    )
    assert all(isinstance(s, int) and s > 0 for s in rec.supported_speeds_mbps)
    assert all(isinstance(a, str) for a in rec.addresses) and all(isinstance(m, str) for m in rec.members)
    assert all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in rec.nic_counters.items()
    )
    if rec.counters is not None:
        assert isinstance(rec.counters, Counters)
        for name in COUNTER_FIELDS:
            value = getattr(rec.counters, name)
            assert value is None or (isinstance(value, int) and value >= 0), (name, value)


def _check_flow(rec: FlowRecord) -> None:
    assert isinstance(rec.local, str) and isinstance(rec.remote, str) and rec.local and rec.remote
    for name in (
        "cwnd",
        "mss",
        "pmtu",
        "bytes_acked",
        "bytes_received",
        "bytes_retrans",
        "segs_out",
        "retrans_total",
        "busy_ms",
        "rwnd_limited_ms",
        "sndbuf_limited_ms",
        "snd_wnd",
        "send_q",
        "recv_q",
    ):
        value = getattr(rec, name)
        assert value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0), (name, value)
    for name in ("rtt_ms", "min_rtt_ms", "delivery_rate_bps", "bbr_bw_bps"):
        value = getattr(rec, name)
        assert value is None or (isinstance(value, float) and math.isfinite(value) and value >= 0), (name, value)
    assert rec.pmtu is None or 0 < rec.pmtu <= 65536


def _check_iperf3(result: Iperf3Result) -> None:
    for name in (
        "forward_sent_bps",
        "forward_received_bps",
        "reverse_sent_bps",
        "reverse_received_bps",
        "rtt_ms",
        "cpu_local_pct",
        "cpu_remote_pct",
        "duration_s",
    ):
        value = getattr(result, name)
        assert value is None or (isinstance(value, float) and math.isfinite(value) and value >= 0), (name, value)
    assert result.error is None or isinstance(result.error, str)


def check(entry: registry.Entry, text: str) -> None:
    try:
        result = entry.parse(text, _os_for(entry))
    except ParseError as exc:
        assert str(exc)  # a message the user can read
        return
    if isinstance(result, list):
        for rec in result:
            _check_flow(rec) if isinstance(rec, FlowRecord) else _check_record(rec)
    elif isinstance(result, TcpCounters):
        for name in TCP_COUNTERS:
            value = getattr(result, name)
            assert value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64), (
                name,
                value,
            )
    elif isinstance(result, Iperf3Progress):
        if result.result is not None:
            _check_iperf3(result.result)
    else:
        _check_iperf3(result)


def test_registry_covers_the_linux_and_iperf3_commands():
    for command in (
        "cat /proc/net/dev",
        "ip -s -j link",
        "ip -s link",
        "ip -j addr",
        "ethtool eth0",
        "ethtool -S eth0",
        "ethtool -g eth0",
        "ethtool -i eth0",
        "iperf3 -c h -J",
    ):
        assert registry.find("linux", command) is not None, command
    assert len(FIXTURES) >= 40


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_every_other_commands_output(entry):
    for text in TEXTS:
        check(entry, text)


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
@PROPERTY
@given(text=st.text(max_size=400))
def test_arbitrary_text(entry, text):
    check(entry, text)


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
@PROPERTY
@given(data=st.data())
def test_truncated_real_output(entry, data):
    text = data.draw(st.sampled_from(TEXTS))
    cut = data.draw(st.integers(0, len(text)))
    check(entry, text[:cut])


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
@PROPERTY
@given(lines=st.sampled_from(TEXTS).flatmap(lambda t: st.permutations(t.splitlines())))
def test_shuffled_lines(entry, lines):
    check(entry, "\n".join(lines) + "\n")


_JUNK = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["-1", "18446744073709551616", "NaN", "1e400", ":", "|", "{", "[]", "null", "\x1b[2J", "n/a", "Unknown!", "0"]
    ),
)


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
@PROPERTY
@given(data=st.data())
def test_lines_and_words_replaced_by_junk(entry, data):
    lines = data.draw(st.sampled_from(TEXTS)).splitlines()
    for _ in range(data.draw(st.integers(1, 3))):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1))
        words = lines[i].split(" ")
        j = data.draw(st.integers(0, len(words) - 1))
        words[j] = data.draw(_JUNK)
        lines[i] = " ".join(words)
    check(entry, "\n".join(lines) + "\n")


# --- the shapes a hostile or broken host prints (issue 9): every parser answers them with a
# record it can stand behind or a ParseError, never another exception. bench/bench_parsers.py
# runs the same strategies for 10,000 cases each and times pathological 40 KB lines.

HOSTILE_NUMBERS = st.sampled_from(
    [
        "²",
        "١٢٣",
        "１２",
        "9" * 400,
        "9" * 5000,
        "99999999999",
        "18446744073709551617",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "1e300",
        "1e-300",
        "-0",
        "0x10",
        "+5",
        "1_000",
        "",
    ]
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _replace_numbers(text: str, data) -> str:
    spots = list(_NUMBER.finditer(text))
    if not spots:
        return text
    for m in sorted(
        data.draw(st.lists(st.sampled_from(spots), min_size=1, max_size=4, unique_by=lambda m: m.start())),
        key=lambda m: -m.start(),
    ):
        text = text[: m.start()] + data.draw(HOSTILE_NUMBERS) + text[m.end() :]
    return text


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
@PROPERTY
@given(data=st.data())
def test_numbers_replaced_by_hostile_numbers(entry, data):
    check(entry, _replace_numbers(data.draw(st.sampled_from(TEXTS)), data))


def _one_document(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return text.lstrip().startswith(("{", "["))


JSON_TEXTS = [t for t in TEXTS if _one_document(t)]
HOSTILE_JSON = st.sampled_from(
    [[], ["a", "b"], {}, {"x": 1}, "text", "", None, True, -1, 10**400, 1e308, float("nan"), float("inf"), "²"]
)


def _paths(doc, path=()):
    yield path
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:5]):
            yield from _paths(v, (*path, i))


def _with_value(doc, path, value):
    if not path:
        return value
    copy = list(doc) if isinstance(doc, list) else dict(doc)
    copy[path[0]] = _with_value(doc[path[0]], path[1:], value)
    return copy


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
@PROPERTY
@given(data=st.data())
def test_json_values_of_the_wrong_type(entry, data):
    doc = json.loads(data.draw(st.sampled_from(JSON_TEXTS)))
    for _ in range(data.draw(st.integers(1, 3))):
        doc = _with_value(doc, data.draw(st.sampled_from(list(_paths(doc)))), data.draw(HOSTILE_JSON))
    check(entry, json.dumps(doc))


LONG_LINES = [
    "Speed: a" + " " * 40_000 + "b",
    "x" * 40_000,
    ":" * 40_000,
    "a:" + " " * 40_000 + "1",
    " ".join(["1"] * 20_000),
    "|".join(["a"] * 20_000),
    "key:" * 10_000,
    "\t".join(["x:"] * 13_000),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_one_long_pathological_line(entry):
    for line in LONG_LINES:
        check(entry, line + "\n")
