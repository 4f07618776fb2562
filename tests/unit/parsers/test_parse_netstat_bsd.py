"""netstat -i on the BSD family, from the real captures in tests/fixtures/{freebsd,macos,opnsense}."""

from __future__ import annotations

import pytest

from linkdeck.core.model import Counters
from linkdeck.parsers import registry
from linkdeck.parsers.netstat_bsd import merge_counters, parse
from linkdeck.parsers.parse_error import ParseError
from tests.corpus import by_name, fixture


def test_freebsd14_ibdn_takes_link_row_counters_and_both_drop_columns():
    recs = parse(fixture("freebsd/netstat-ibdn__ohai-freebsd14-spec.txt"))
    assert [r.name for r in recs] == ["vtnet0", "lo0"]
    vtnet0 = recs[0]
    assert vtnet0.mtu == 1500
    assert vtnet0.mac == "fa:16:3e:ba:3e:25"
    # Link row, not the per-address rows (189 / 18998 on the IPv4 row).
    assert vtnet0.counters == Counters(
        rx_bytes=46746, tx_bytes=26242, rx_packets=579, tx_packets=210, rx_errors=0, tx_errors=0, rx_drops=0, tx_drops=0
    )
    assert dict(vtnet0.extra)["link_index"] == "1"
    lo0 = recs[1]
    assert lo0.mtu == 16384 and lo0.mac is None  # lo0's link "address" is its own name
    assert lo0.counters.rx_bytes == 0 and lo0.counters.tx_drops == 0


def test_freebsd12_ib_address_rows_with_their_own_counts_are_ignored():
    recs = by_name(parse(fixture("freebsd/netstat-ib__jc-freebsd12.txt")))
    assert set(recs) == {"em0", "lo0"}
    em0 = recs["em0"]
    assert em0.counters.rx_packets == 372717 and em0.counters.rx_bytes == 372538087
    assert em0.counters.tx_packets == 213821 and em0.counters.tx_bytes == 198573339
    assert em0.counters.rx_drops == 0
    assert em0.counters.tx_drops is None  # no -d: no output drop column
    assert em0.nic_counters == {"collisions": 0}
    assert recs["lo0"].counters.rx_bytes == 21024 and recs["lo0"].mtu == 16384


def test_freebsd12_plain_i_has_no_bytes():
    recs = by_name(parse(fixture("freebsd/netstat-i__jc-freebsd12.txt")))
    em0 = recs["em0"]
    assert em0.counters.rx_packets == 189449 and em0.counters.tx_packets == 211310
    assert em0.counters.rx_bytes is None and em0.counters.tx_bytes is None
    assert recs["lo0"].counters.rx_packets == 26


def test_opnsense_markdown_bold_counter_is_read_as_the_number():
    (lagg0,) = parse(fixture("opnsense/netstat-i__opnsense-core-issue-3904-lagg-before.txt"))
    assert lagg0.name == "lagg0" and lagg0.mtu == 1500
    assert lagg0.counters.tx_errors == 5 and lagg0.counters.tx_packets == 0
    assert dict(lagg0.extra)["link_index"] == "11"


def test_macos_ragged_drop_column_down_marker_and_overflowing_lladdr():
    recs = by_name(parse(fixture("macos/netstat-i-d-l-b-n__ohai-darwin-spec.txt")))
    assert list(recs) == ["lo0", "gif0", "stf0", "en1", "p2p0", "en0", "fw0", "utun0"]
    en1 = recs["en1"]
    assert en1.counters.rx_bytes == 2530556736 and en1.counters.tx_bytes == 18228234970
    assert en1.counters.bits == 64  # a value above 2**32 proves 64-bit counters
    # Link rows on macOS print no Drop value (address rows print '-'): unknown, not zero.
    assert en1.counters.tx_drops is None and en1.counters.rx_drops is None
    assert recs["gif0"].oper == "down" and recs["fw0"].oper == "down"
    assert recs["en1"].oper is None  # no '*': netstat alone does not prove the link is up
    assert recs["fw0"].mac == "a4:b1:97:ff:fe:b9:3a:d4" and recs["fw0"].counters.tx_bytes == 1038
    assert recs["lo0"].mac is None and recs["lo0"].counters.rx_packets == 174982  # empty Address
    assert recs["utun0"].counters.tx_bytes == 740 and recs["utun0"].mtu == 1380


def test_macos_bi_repeated_counters_and_large_values():
    recs = by_name(parse(fixture("macos/netstat-bi__macmon-pl-data.txt")))
    assert recs["en0"].counters.tx_bytes == 43120998925 and recs["en0"].counters.rx_packets == 7968840
    assert recs["en1"].counters.rx_bytes == 100192067 and recs["en1"].counters.bits is None
    assert recs["fw0"].mtu == 4078 and recs["fw0"].oper is None
    assert len(recs) == 7


def test_macos_datadog_truncated_network_column():
    recs = by_name(parse(fixture("macos/netstat-i-b__datadog-check-bsd-comment.txt")))
    assert recs["ham0"].mtu == 1404
    assert recs["ham0"].counters.rx_bytes == 6815204 and recs["ham0"].counters.tx_packets == 18742
    assert recs["en0"].counters.rx_bytes == 13835457425


def test_macos_truncated_names_stay_apart_by_link_index():
    recs = parse(fixture("macos/netstat-i__jc-osx-10.14.6.txt"))
    vmnets = [r for r in recs if r.name == "vmnet"]
    assert [dict(r.extra)["link_index"] for r in vmnets] == ["19", "20"]
    assert [r.counters.rx_packets for r in vmnets] == [0, 1853]
    names = [r.name for r in recs]
    assert "bridg" in names and "XHC1" in names and "ap1" in names
    xhc1 = next(r for r in recs if r.name == "XHC1")
    assert xhc1.oper == "down" and xhc1.mtu is None  # MTU 0 is unknown
    en0 = next(r for r in recs if r.name == "en0")
    assert en0.counters.rx_packets == 23300545 and en0.counters.tx_errors == 464


@pytest.mark.parametrize(
    "rel",
    [
        "freebsd/netstat-iw1__bsdrp-pc-engines-apu-re.txt",
        "freebsd/netstat-ihw1__bsdrp-dropping-packets-cxgbe-humanized.txt",
    ],
)
def test_interval_form_is_a_clear_parse_error(rel):
    with pytest.raises(ParseError, match="interval form"):
        parse(fixture(rel))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no output"),
        ("garbage here\n", "Name Mtu Network Address"),
        ("Name Mtu Network Address Ipkts Ierrs\nem0 1500 <Link#1> 00:0c:29:1a:4e:3b 5.0k 0\n", "humanized"),
        ("Name Mtu Network Address Ipkts\nem0 1500 <Link#1> aa:bb:cc:dd:ee:ff 1 2 3\n", "3 values for 1 columns"),
        (
            "Name Mtu Network Address Ipkts Ierrs Opkts\nem0 1500 <Link#1> aa:bb:cc:dd:ee:ff 7\n",
            "1 values for 3 columns",
        ),
        ("Name Mtu Network Address Ipkts Bogus\n", "unknown column"),
        ("Name Mtu Network Address Ipkts\nem0 x <Link#1> 1\n", "the MTU is not a number"),
    ],
)
def test_garbled_input_names_the_problem(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


def test_merge_counters_fills_fields_from_the_second_table():
    bytes_only = Counters(rx_bytes=10, tx_bytes=20)
    packets = Counters(rx_packets=1, tx_packets=2, rx_bytes=999, tx_drops=3)
    merged = merge_counters(bytes_only, packets)
    assert merged == Counters(rx_bytes=10, tx_bytes=20, rx_packets=1, tx_packets=2, tx_drops=3)
    assert merge_counters(None, packets) is packets


@pytest.mark.parametrize(
    "os_name, command",
    [
        ("freebsd", "netstat -ibdn"),
        ("macos", "netstat -i -d -l -b -n"),
        ("opnsense", "netstat -i"),
        ("openbsd", "netstat -ibnW"),
    ],
)
def test_registry_finds_the_parser(os_name, command):
    entry = registry.find(os_name, command)
    assert entry is not None
    recs = entry.parse(fixture("freebsd/netstat-ibdn__ohai-freebsd14-spec.txt"), os_name)
    assert recs[0].counters.rx_bytes == 46746


def test_registry_does_not_claim_other_netstat_modes():
    assert registry.find("freebsd", "netstat -rn").parse.__module__ == "linkdeck.parsers.netstat_route"
    assert registry.find("freebsd", "netstat -s") is None


# -- property: arbitrary, truncated and mixed-up output raises ParseError or parses ------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_ALL = [
    "freebsd/netstat-ibdn__ohai-freebsd14-spec.txt",
    "freebsd/netstat-ib__jc-freebsd12.txt",
    "macos/netstat-i-d-l-b-n__ohai-darwin-spec.txt",
    "macos/netstat-i__jc-osx-10.14.6.txt",
    "opnsense/netstat-i__opnsense-core-issue-3904-lagg-before.txt",
]


def _only_parse_errors(text: str) -> None:
    try:
        records = parse(text)
    except ParseError:
        return
    for rec in records:
        assert rec.name and not rec.name.endswith("*")
        if rec.counters is not None:
            assert all(v is None or v >= 0 for v in rec.counters.as_dict().values())


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises_anything_else(text):
    _only_parse_errors(text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_ALL), st.integers(0, 4000), st.randoms(use_true_random=False))
def test_truncated_and_shuffled_captures_never_raise_anything_else(rel, cut, rnd):
    lines = fixture(rel)[:cut].splitlines()
    _only_parse_errors("\n".join(lines))
    rnd.shuffle(lines)
    _only_parse_errors("\n".join(lines))
