"""illumos's per-flow view: ``connstat`` read from the man page's published examples (real
output), and the flows loop run for real (sh and awk here) over a fake ``connstat`` that
replays a -P capture built from those examples (constructed, and labelled so: no real -P
capture exists), through the same reader and judge as Linux. connstat tells no busy or
window-limited time: a sending flow's limiter is ``unknown``, never a guess."""

from __future__ import annotations

import os
import stat

import pytest

from linkdeck.flows.judge import Limiter, Why
from linkdeck.flows.round_report import report
from linkdeck.flows.sampler import FlowsUnavailable, RoundReader, illumos_script, no_flows_reason, read_rounds
from linkdeck.parsers import ParseError, connstat, registry
from linkdeck.present.flow_words import verdict
from linkdeck.transport.local_runner import LocalRunner
from tests.corpus import FIXTURES, fixture

EXAMPLE1 = "illumos/connstat-e__illumos-man-example1.txt"
EXAMPLE3 = "illumos/connstat-F-o-outbytes-suna-cwnd-unsent-retransbytes-rtt-T-d-i__illumos-man-example3.txt"
CONSTRUCTED = "illumos/connstat-P-e-T-u-o-flows__constructed-from-man-examples.txt"


def test_the_default_table_gives_each_established_connection_s_endpoints():
    flows = connstat.parse(fixture(EXAMPLE1))
    assert len(flows) == 6
    assert (flows[0].local, flows[0].remote) == ("10.43.37.172:51275", "172.16.105.4:389")
    assert (flows[5].local, flows[5].remote) == ("10.43.37.172:80", "10.43.16.132:59467")
    assert flows[0].rtt_ms is None and flows[0].bytes_acked is None  # not asked for: unknown


def test_an_interval_table_with_date_lines_reads_every_block():
    rows = connstat.rows(fixture(EXAMPLE3))
    assert [r["outbytes"] for r in rows] == ["1647048093", "1660720109", "1661875613", "1681478637", "1692028765"]
    assert rows[3] == {
        "outbytes": "1681478637",
        "suna": "41992",
        "cwnd": "41992",
        "unsent": "437304",
        "retransbytes": "3932076",
        "rtt": "1471",
    }
    with pytest.raises(ParseError, match="no laddr"):
        connstat.parse(fixture(EXAMPLE3))  # counters without endpoints are no flow


def test_a_parsable_line_becomes_a_flow_record():
    line = fixture(CONSTRUCTED).splitlines()[1]
    f = connstat.parse_line(line)
    assert (f.local, f.remote) == ("10.43.37.172:41934", "10.43.16.132:50001")
    assert f.bytes_acked == 1647048093 - 47784  # sent less still unacknowledged
    assert f.bytes_retrans == 3701844 and f.retrans_total == 2556 and f.segs_out == 1137464 + 2556
    assert f.rtt_ms == pytest.approx(0.495) and f.cwnd == 47784 // 1448 and f.snd_wnd == 1048576
    assert f.min_rtt_ms is None and f.busy_ms is None and f.pmtu is None  # connstat has none
    assert connstat.parse_line("fe80::1,22,fe80::2,5000,1,2,3,0,0,0,0,1,1,1,1").local == "[fe80::1]:22"
    for bad in ("10.0.0.1,22", "10.0.0.1,x,10.0.0.2,5,1,2,3,0,0,0,0,1,1,1,1", "a,1,b,2,1,²,3,0,0,0,0,1,1,1,1"):
        with pytest.raises(ParseError):
            connstat.parse_line(bad)


def test_registered_for_illumos():
    assert registry.find("omnios", "connstat -e") is not None and registry.find("linux", "connstat -e") is None


def test_illumos_has_a_per_flow_view_and_a_fixed_command():
    assert no_flows_reason("omnios") is None and no_flows_reason("smartos") is None
    script = illumos_script(1.0, 10, ["10.43.37.172"])
    assert (
        "connstat -P -e -T u -o "
        "laddr,lport,raddr,rport,inbytes,outbytes,outsegs,retranssegs,retransbytes,suna,unsent,swnd,cwnd,mss,rtt -i 1 |"
    ) in script
    assert "-v only=' 10.43.37.172 '" in script and "!" not in script and "\\" not in script
    with pytest.raises(ValueError):
        illumos_script(1.0, 10, ["10.0.0.1; reboot"])
    with pytest.raises(FlowsUnavailable, match="connstat not found: it ships with illumos"):
        RoundReader("omnios").feed("@@LD FLOWS-MISSING connstat")


class FakeConnstat(LocalRunner):
    """Runs the real loop here, with a ``connstat`` on PATH that checks it was called as the
    template says and prints the capture."""

    def __init__(self, tmp_path) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        fake = self.bin / "connstat"
        fake.write_text(
            "#!/bin/sh\n"
            '[ "$*" = "-P -e -T u -o '
            + ",".join(connstat.FIELDS)
            + ' -i 1" ] || { echo "connstat called as: $*" >&2; exit 1; }\n'
            f"tail -n +5 '{FIXTURES / CONSTRUCTED}'\n"
        )
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)

    async def stream(self, argv, tick=None):
        async for line in super().stream(["env", f"PATH={self.bin}:{os.environ['PATH']}", *argv], tick):
            yield line


async def test_the_loop_ranks_and_judges_connstat_s_flows(tmp_path):
    rounds = [r async for r in read_rounds(FakeConnstat(tmp_path), 1.0, 2, (), "omnios")]
    assert len(rounds) == 2  # three blocks: the last one's end never came
    first, second = rounds
    assert (first.prev_time, first.time, first.total) == (None, 1467903880.0, 3)
    assert (second.prev_time, second.time, second.total) == (1467903880.0, 1467903881.0, 3)
    assert len(second.flows) == 2  # the top 2 of 3, ranked by bytes moved
    got = report("zfs1", second, {})
    by_port = {f.remote.rsplit(":", 1)[1]: f for f in got.flows}
    assert set(by_port) == {"50001", "2049"}  # the idle ssh flow moved least: cut on the host
    bulk = by_port["50001"]
    assert bulk.tx_bps == ((1660720109 - 41992) - (1647048093 - 47784)) * 8
    assert bulk.retrans == 44 and bulk.retrans_pct == pytest.approx(100 * 44 / (1146906 + 2600 - 1137464 - 2556))
    assert (bulk.limiter, bulk.why) == (Limiter.UNKNOWN, Why.NOT_REPORTED)
    said, evidence = verdict(bulk)
    assert "connstat" in evidence and "RTT 0.67 ms" in evidence
    nfs = by_port["2049"]
    assert (nfs.limiter, nfs.why) == (Limiter.UNKNOWN, Why.RECEIVING) and nfs.rx_bps == 12_000_000 * 8
