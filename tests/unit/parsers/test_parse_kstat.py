"""kstat -p link::: over the real SmartOS zone dump and hand-checked variants of its lines."""

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.kstat import FILTERED_COMMAND, parse, parse_with_time
from tests.corpus import fixture

DUMP = "illumos/kstat-p-link0__datadog-fixture-smartos-zone.txt"


def test_smartos_zone_dump_64bit_counters_speed_state():
    records, snaptime = parse_with_time(fixture(DUMP))
    recs = {r.name: r for r in records}
    assert list(recs) == ["net0", "net1"]
    net0 = recs["net0"]
    c = net0.counters
    assert (c.rx_bytes, c.tx_bytes, c.rx_packets, c.tx_packets) == (113983614, 12820668, 682834, 105445)
    assert (c.rx_errors, c.tx_errors, c.rx_drops, c.tx_drops, c.bits) == (0, 0, 0, 0, 64)
    assert net0.speed_mbps == 10000  # ifspeed 10000000000 bit/s
    assert net0.duplex is None  # link_duplex 0 = unknown
    assert net0.oper == "up"
    assert net0.nic_counters["brdcstrcv"] == 527336
    assert ("zone", "53aa9b7e-48ba-4152-a52b-a6368c3d9e7c") in net0.extra
    assert recs["net1"].counters.rx_bytes == 304384894
    assert recs["net1"].counters.tx_packets == 1594
    assert snaptime == pytest.approx(16834735.1613302)  # the later of the two links


def test_registry_matches_kstat_forms():
    for cmd in ("kstat -p link:::", "kstat -p link:0:", "kstat -p link:0:net0:*", FILTERED_COMMAND):
        assert registry.find("smartos", cmd) is not None, cmd
    assert registry.find("illumos", "kstat -p link:0:").parse(fixture(DUMP), "illumos")[1].name == "net1"


def test_32bit_fallback_marks_counters_32bit_and_duplex_full():
    text = (
        "link:0:e1000g0:rbytes\t4294967000\n"
        "link:0:e1000g0:obytes\t12\n"
        "link:0:e1000g0:ipackets\t7\n"
        "link:0:e1000g0:opackets\t3\n"
        "link:0:e1000g0:ifspeed\t1000000000\n"
        "link:0:e1000g0:link_duplex\t2\n"
        "link:0:e1000g0:link_state\t0\n"
        "link:0:e1000g0:snaptime\t123.5\n"
    )
    (rec,), t = parse_with_time(text)
    assert rec.counters.bits == 32 and rec.counters.rx_bytes == 4294967000
    assert (rec.speed_mbps, rec.duplex, rec.oper) == (1000, "full", "down")
    assert t == 123.5


def test_speed_zero_is_unknown_and_half_duplex_needs_speed():
    text = "link:0:igb0:ifspeed\t0\nlink:0:igb0:link_duplex\t1\nlink:0:igb0:link_state\t-1\n"
    (rec,) = parse(text)
    assert (rec.speed_mbps, rec.duplex, rec.oper, rec.counters) == (None, None, None, None)


def test_other_modules_are_ignored_and_garbage_raises():
    assert parse("unix:0:system_misc:ncpus\t8\n") == []
    with pytest.raises(ParseError, match="kstat -p link:::"):
        parse("this is not kstat output\n")
    with pytest.raises(ParseError, match="net0:rbytes64 is not a number: 'lots'"):
        parse("link:0:net0:rbytes64\tlots\n")
