"""TCP counters on the BSD family, macOS, illumos and Solaris (issue 19 §1): each command's
parser on the real captures (some partial: see each fixture's header), what the samplers keep
of them on the host, and the adapters' frames."""

from __future__ import annotations

import subprocess

import pytest

from linkdeck.core.tcpstats import TcpCounters
from linkdeck.parsers import kstat_tcp, netstat_tcp_bsd
from linkdeck.parsers.parse_error import ParseError
from linkdeck.platforms import illumos
from linkdeck.platforms.bsd import BsdAdapter
from tests.corpus import fixture

MACOS = "macos/netstat-s-p-tcp__datadog-fixture-macos-all-zero.txt"
FREEBSD = "freebsd/netstat-s-tcp-section__freebsd-drm-kmod-issue-68-partial.txt"


def test_macos_singular_wording_all_zero():
    c = netstat_tcp_bsd.parse(fixture(MACOS))
    assert c == TcpCounters(
        out_segs=0, retrans_segs=0, in_segs=0, timeouts=0, rcv_pruned=0, listen_drops=0, in_errs=0, in_csum_errs=0
    )  # no lost-retransmit, receive-queue, backlog or out-of-order drop counters on macOS: unknown


def test_freebsd_plural_wording():
    c = netstat_tcp_bsd.parse(fixture(FREEBSD))
    assert (c.out_segs, c.retrans_segs, c.in_segs, c.ofo_drops, c.listen_drops, c.in_errs) == (0, 0, 0, 0, 0, 0)
    assert c.timeouts is None  # the partial capture stops before "retransmit timeouts"


def test_freebsd_numbers_land_on_the_right_counters():
    """Constructed from the FreeBSD capture: each counter given its own number."""
    text = fixture(FREEBSD)
    for words, n in (
        ("packets sent", 91000), ("data packets (0 bytes) retransmitted", 910), ("packets received", 45000),
        ("discarded for bad checksums", 3), ("discarded for bad header offset fields", 4),
        ("discarded because packet too short", 5),
        ("discarded due to full reassembly queue", 6), ("listen queue overflows", 7),
    ):  # fmt: skip
        text = text.replace(f"\t0 {words}\n", f"\t{n} {words}\n", 1)
    c = netstat_tcp_bsd.parse(text)
    assert (c.out_segs, c.retrans_segs, c.in_segs, c.in_csum_errs, c.in_errs, c.ofo_drops, c.listen_drops) == (
        91000,
        910,
        45000,
        3,
        12,
        6,
        7,
    )


@pytest.mark.parametrize("rel", [MACOS, FREEBSD])
def test_what_the_sampler_keeps_on_the_host_reads_the_same(rel):
    text = fixture(rel)
    kept = subprocess.run(
        ["grep", "-E", netstat_tcp_bsd.GREP_PATTERN], input=text, capture_output=True, text=True
    ).stdout
    assert netstat_tcp_bsd.parse(kept) == netstat_tcp_bsd.parse(text)
    assert len(kept) < 300 < len(text)  # a dozen lines of the hundred and more


@pytest.mark.parametrize("text", ["", "tcp:\n", "udp:\n\t5 datagrams received\n", "\tx packets sent\n"])
def test_not_netstat_s_is_a_parse_error(text):
    with pytest.raises(ParseError):
        netstat_tcp_bsd.parse(text)


def test_a_bsd_frame_carries_the_tcp_counters_and_a_garbled_section_only_loses_them():
    adapter = BsdAdapter(None, "freebsd")
    netstat = fixture("freebsd/netstat-ibdn__ohai-freebsd14-spec.txt")
    kept = subprocess.run(
        ["grep", "-E", netstat_tcp_bsd.GREP_PATTERN], input=fixture(FREEBSD), capture_output=True, text=True
    ).stdout
    sample = adapter.parse_frame(
        {"time": "", "netstat": netstat, "tcp": kept.replace("\t0 packets sent", "\t12 packets sent")}
    )
    assert sample.tcp is not None and sample.tcp.out_segs == 12
    garbled = adapter.parse_frame({"time": "", "netstat": netstat, "tcp": "netstat: unknown protocol\n"})
    assert garbled.tcp is None and garbled.counters["vtnet0"].rx_bytes is not None


def test_solaris_netstat_s_P_tcp_of_a_busy_server():
    c = kstat_tcp.parse_netstat(fixture("solaris/netstat-s-P-tcp__dansysadm-blog-solaris.txt"))
    assert (c.out_segs, c.retrans_segs, c.in_segs, c.timeouts, c.listen_drops) == (
        21843389688,
        41967918,
        11491393189,
        1305409,
        11,
    )
    assert c.rcv_pruned is None and c.in_csum_errs is None


def test_illumos_kstat_partial_falls_back_to_data_segments_sent():
    c = kstat_tcp.parse_kstat(fixture("illumos/kstat-p-tcp-partial__rockwood-retrans-reporter-comment.txt"))
    assert (c.out_segs, c.retrans_segs) == (2120569978, 967731519)  # outDataSegs: no outSegs in the excerpt


def test_an_illumos_frame_reads_tcp_beside_the_links_from_one_kstat():
    """Constructed: the link kstat replayed in the lab (real SmartOS statistics) plus tcp lines
    written the way `kstat -p` prints them (module:instance:name:statistic, a TAB, the value)."""
    links = "".join(
        f"link:0:net0:{stat}\t{v}\n" for stat, v in (("rbytes64", 100), ("obytes64", 200), ("snaptime", "12.5"))
    )
    tcp = "tcp:0:tcp:inSegs\t5000\ntcp:0:tcp:outSegs\t9000\ntcp:0:tcp:retransSegs\t90\ntcp:0:tcp:timRetrans\t3\n"
    adapter = illumos.IllumosAdapter(None, "illumos")
    sample = adapter.parse_frame({"kstat": tcp + links})
    assert sample.counters["net0"].rx_bytes == 100 and sample.time == 12.5
    assert (sample.tcp.out_segs, sample.tcp.retrans_segs, sample.tcp.in_segs, sample.tcp.timeouts) == (
        9000,
        90,
        5000,
        3,
    )
    assert adapter.parse_frame({"kstat": links}).tcp is None  # no tcp kstats visible: unknown


def test_the_illumos_tick_reads_tcp_in_the_same_kstat_process():
    script = illumos.build_script(10)
    assert script.count("kstat -p") == 1 and kstat_tcp.SELECTOR in script


def test_a_counter_wider_than_64_bits_is_a_parse_error_on_every_os():
    with pytest.raises(ParseError, match="64-bit"):
        kstat_tcp.parse_kstat("tcp:0:tcp:retransSegs\t18446744073709551616\n")
    with pytest.raises(ParseError, match="64-bit"):
        netstat_tcp_bsd.parse("tcp:\n\t18446744073709551616 packets sent\n")
