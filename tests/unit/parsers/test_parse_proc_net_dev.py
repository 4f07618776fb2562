"""/proc/net/dev over real captures (tests/fixtures/linux/, 4-line header stripped here)."""

import pytest

from linkdeck.parsers import ParseError, registry
from linkdeck.parsers.proc_net_dev import parse
from tests.corpus import fixture


def by_name(text: str) -> dict:
    return {r.name: r for r in parse(text)}


def test_jc_vm_lo_and_ens33():
    recs = by_name(fixture("linux/proc-net-dev__jc-linux-proc-fixture.txt"))
    assert list(recs) == ["lo", "ens33"]
    c = recs["ens33"].counters
    assert (c.rx_bytes, c.rx_packets, c.tx_bytes, c.tx_packets) == (60600053, 109378, 44256546, 121425)
    assert (c.rx_errors, c.tx_errors, c.rx_drops, c.tx_drops) == (0, 0, 0, 0)
    assert recs["lo"].counters.rx_bytes == 13222 and recs["lo"].counters.tx_packets == 152
    assert recs["lo"].nic_counters == {
        "rx_fifo": 0, "rx_frame": 0, "rx_compressed": 0, "rx_multicast": 0,
        "tx_fifo": 0, "tx_colls": 0, "tx_carrier": 0, "tx_compressed": 0,
    }  # fmt: skip
    # /proc/net/dev knows nothing but counters.
    assert recs["ens33"].mtu is None and recs["ens33"].speed_mbps is None and recs["ens33"].kind is None


def test_procfs_container_view():
    recs = by_name(fixture("linux/proc-net-dev__prometheus-procfs-fixture-pid26231.txt"))
    assert list(recs) == ["lo", "eth0"]
    assert recs["lo"].counters.rx_bytes == 0
    c = recs["eth0"].counters
    assert (c.rx_bytes, c.rx_packets, c.tx_bytes, c.tx_packets) == (438, 5, 648, 8)


def test_captured_namespace_with_odd_name_and_drops():
    recs = by_name(fixture("linux/captured-proc-net-dev.txt"))
    assert list(recs) == ["lo", "veth0", "br0", "vpeer2", "v.üm|x", "mv0", "tap0"]
    assert recs["veth0"].counters.tx_bytes == 5140390
    assert recs["br0"].counters.tx_drops == 1
    assert recs["br0"].nic_counters["rx_multicast"] == 8
    # A name holding '|' must not be mistaken for a header line.
    assert recs["v.üm|x"].counters.rx_bytes == 2050 and recs["v.üm|x"].counters.tx_packets == 3


def test_counter_glued_to_colon_and_64bit_values():
    text = "eth0:18446744073709551615 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"
    (rec,) = parse(text)
    assert rec.name == "eth0"
    assert rec.counters.rx_bytes == 2**64 - 1
    assert (rec.counters.rx_packets, rec.counters.rx_errors, rec.counters.rx_drops) == (1, 2, 3)
    assert (rec.counters.tx_bytes, rec.counters.tx_drops) == (8, 11)
    assert rec.nic_counters["tx_carrier"] == 14


def test_header_order_is_read_not_assumed():
    text = "Inter-|   Receive    |  Transmit\n face |packets bytes|bytes packets\n  eth0: 5 700 900 7\n"
    (rec,) = parse(text)
    assert (rec.counters.rx_packets, rec.counters.rx_bytes, rec.counters.tx_bytes, rec.counters.tx_packets) == (
        5,
        700,
        900,
        7,
    )
    assert rec.counters.rx_errors is None  # no such column: unknown, not 0


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("  eth0: 1 2 3\n", "expected 16 counters, found 3"),
        ("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x\n", "a counter is not a number: 'x'"),
        ("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 -1\n", "a counter is not a number: '-1'"),
        ("hello world\n", "expected 'NAME: counters"),
        ("", "no header"),
        ("Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n", "no 'packets' column"),
    ],
)
def test_garbled_rows_raise_parse_error_naming_the_problem(text, fragment):
    with pytest.raises(ParseError) as exc:
        parse(text)
    assert fragment in str(exc.value)
    assert str(exc.value).startswith("cat /proc/net/dev:")


def test_registry_entry():
    entry = registry.find("linux", "cat /proc/net/dev")
    assert entry is not None and registry.find("linux", "cat  /proc/26231/net/dev") is entry
    assert registry.find("freebsd", "cat /proc/net/dev") is None
    assert [r.name for r in entry.parse(fixture("linux/proc-net-dev__jc-linux-proc-fixture.txt"), "linux")] == [
        "lo",
        "ens33",
    ]


@pytest.mark.parametrize(
    "name",
    [
        "linux/proc-net-dev__jc-linux-proc-fixture.txt",
        "linux/proc-net-dev__prometheus-procfs-fixture-pid26231.txt",
        "linux/captured-proc-net-dev.txt",
    ],
)
def test_memoised_rows_equal_a_fresh_parse(name, monkeypatch):
    # rows are memoised by their text and the header's columns: a repeat (cache hit) gives
    # what parsing it afresh gives, and the same row under another header is read by that one
    from linkdeck.parsers import proc_net_dev

    text = fixture(name)
    cached = [parse(text), parse(text)]
    monkeypatch.setattr(proc_net_dev, "_parse_row", proc_net_dev._parse_row.__wrapped__)
    fresh = parse(text)
    assert cached[0] == cached[1] == fresh and len(fresh) >= 2


def test_memoised_row_under_another_header_and_a_bad_row_each_time():
    row = "  eth0: 5 700 900 7\n"
    plain = "Inter-|   Receive    |  Transmit\n face |bytes packets|bytes packets\n" + row
    swapped = "Inter-|   Receive    |  Transmit\n face |packets bytes|bytes packets\n" + row
    assert parse(plain)[0].counters.rx_bytes == 5 and parse(swapped)[0].counters.rx_bytes == 700
    for _ in range(2):  # an error is raised again, never remembered as a row
        with pytest.raises(ParseError, match="expected 16 counters"):
            parse("  eth0: 1 2 3\n")


def test_row_counters_are_the_rows_or_nothing():
    """row_counters (a tick's moving rows) gives the name and counters row gives, or None
    where row gives no record or fails: random rows (constructed), some spoiled, under the
    usual header and under one with columns missing, moved or repeated."""
    import random

    from linkdeck.parsers.proc_net_dev import _DEFAULT_RX, _DEFAULT_TX, row, row_counters

    rng = random.Random(41)
    headers = [
        (_DEFAULT_RX, _DEFAULT_TX),
        (("packets", "bytes", "errs"), ("bytes", "drop", "bytes")),
        (("bytes",), ("bytes", "packets", "colls")),
    ]
    checked = 0
    for _ in range(3000):
        columns = rng.choice(headers)
        width = len(columns[0]) + len(columns[1])
        values = [str(rng.choice((0, 1, rng.randrange(10**12), 2**64 - 1, 10**19))) for _ in range(width)]
        name = rng.choice(("eth0", "lo", "veth1a2b", "", "  "))
        line = f"{name:>6}: " + " ".join(values)
        odd = rng.random()
        if odd < 0.05:
            line = line[:-1] + "x"
        elif odd < 0.1:
            line = line.rsplit(" ", 1)[0]
        elif odd < 0.12:
            line = " face |bytes packets|bytes packets"
        elif odd < 0.14:
            line = "   "
        elif odd < 0.16:
            line = line.replace(":", "", 1)
        elif odd < 0.18:
            line = "Inter-| Receive | Transmit"
        try:
            rec = row(line, columns)
        except ParseError:
            rec = None
        got = row_counters(line, columns)
        assert got is None or (rec is not None and got == (rec.name, rec.counters)), line
        checked += got is not None
        if rec is not None and rec.name and ":" in line and line.split(":", 1)[1].replace(" ", "").isdigit():
            assert got == (rec.name, rec.counters), line  # a plain row of digits is always read
    assert checked > 1000
