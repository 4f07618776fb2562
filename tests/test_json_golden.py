"""Every JSON writer's output, byte for byte, kept in tests/fixtures/json-golden/: a writer
moved onto the field registry (linkdeck.core.jsonfields) must print exactly what it printed
before (key order, rounding, nulls, keys only there when set). The inputs are those
tests/test_json_schemas.py validates: real iperf3, ss and ip captures judged against
constructed ends, and constructed results. ``LINKDECK_GOLDEN_UPDATE=1`` rewrites the files
after a change to an output that is meant."""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest

from linkdeck.commands.shared import print_json
from tests.cli import linkdeck
from tests.corpus import fixture

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "json-golden"


def _printed(document: dict[str, Any]) -> str:
    out = io.StringIO()
    print_json(document, out)
    return out.getvalue()


def _test() -> str:
    from linkdeck.probe import outcome_json
    from tests.ui.test_result_panels_ui import degraded_outcome

    return _printed(outcome_json(degraded_outcome()))


def _matrix() -> str:
    from linkdeck.probe import Matrix, matrix_json
    from tests.ui.test_result_panels_ui import degraded_outcome

    return _printed(matrix_json(Matrix(["web1", "nas01"], {("web1", "nas01"): degraded_outcome()})))


def _diagnose(forward: float) -> Callable[[], str]:
    def made() -> str:
        from linkdeck.present.diagnose_page import diagnosis_json, rank
        from tests.builders import clean_gigabit
        from tests.unit.findings.test_diagnose_rank import PATH_1500, diagnosis, gig_ends, outcome

        path = clean_gigabit(forward_bps=forward, reverse_bps=forward, path_mtu=PATH_1500)
        d = diagnosis(outcome(path, gig_ends()))
        return _printed(diagnosis_json(d, rank(d)))

    return made


def _flows(show_all: bool) -> Callable[[], str]:
    def made() -> str:
        from linkdeck.present.flow_words import report_json
        from tests.ui.test_flows_width_ui import a_round

        got = a_round()
        # constructed: the busiest flow taken as linkdeck's own SSH, so own_ssh has one, and the
        # next as a flow of linkdeck's own test, so linkdeck_tests has one
        got = replace(
            got,
            flows=got.flows[2:],
            own=(replace(got.flows[0], own=True),),
            tests=(replace(got.flows[1], linkdeck_test=True),),
        )
        return _printed(report_json(got, show_all))

    return made


def _addresses() -> str:
    from linkdeck.probe.every_address import addresses_json
    from tests.unit.probe.test_every_address import seed_run

    return _printed(addresses_json(seed_run()))


def _mtu(forward: int, reverse: int | None, src_mtu: int, dst_mtu: int | None, note: str | None) -> Callable[[], str]:
    def made() -> str:
        from linkdeck.core.model import PathMtu
        from linkdeck.present.outcome import mtu_json
        from tests.unit.test_present_mtu import outcome

        probed = replace(
            outcome(forward, reverse, src_mtu, dst_mtu), path=PathMtu(forward, reverse, src_mtu, dst_mtu, note)
        )
        return _printed(mtu_json(probed))

    return made


def _mtu_failed() -> str:
    from linkdeck.core.model import EndState
    from linkdeck.present.outcome import mtu_json
    from linkdeck.probe.session import MtuOutcome

    failed = MtuOutcome("lab-a", "lab-b", "", None, EndState("lab-a"), EndState("lab-b"), "lab-b: unreachable")
    return _printed(mtu_json(failed))


def _parse(command: str, capture: str, os_name: str = "linux") -> Callable[[], str]:
    def made() -> str:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "out.txt"
            path.write_text(fixture(capture))
            out = linkdeck("parse", "--os", os_name, "--command", command, str(path), "--json")
        assert out.returncode == 0, out.stderr
        return out.stdout

    return made


def _snapshot() -> str:
    from linkdeck.commands.snapshot_format import snapshot_json
    from linkdeck.core.codes import Code
    from linkdeck.core.freshness import as_seen, fresh_until
    from linkdeck.core.kinds import Kind
    from linkdeck.core.levels import Severity
    from linkdeck.core.model import Finding, HostDetail, HostState
    from linkdeck.core.tcpstats import TcpRates
    from tests.builders import iface, update, view

    # constructed: a live host with a bond (its members nested under it), its costs and TCP
    # health; one that stopped sending; one never reached; and a finding
    live = update(
        "h1",
        100.0,
        view(iface("eth0", over="bond0", addresses=("192.0.2.10/24",)), rx_bps=81234.56, tx_bps=1e4 / 3, rx_pps=12.0),
        view(iface("bond0", kind=Kind.BOND, members=("eth0",), default_route=True, mac="52:54:00:12:34:56")),
        view(iface("lo", kind=Kind.LOOPBACK, speed_mbps=None, duplex=None, mtu=65536)),
    )
    live = replace(
        live,
        received=100.0,
        fresh_until=fresh_until(100.0, 1.0),
        wire_bytes=412,
        remote_cpu_ms=1.23456,
        reached_at="192.0.2.10",
        tcp=TcpRates(out_segs_ps=8120.0, retrans_segs_ps=32.123, in_segs_ps=4410.0, retrans_pct=0.3956),
        detail=HostDetail(transport="openssh", transport_why="auto"),
    )
    stopped = replace(update("h2", 90.0, view(iface(), rx_bps=5e6)), received=90.0, fresh_until=fresh_until(90.0, 1.0))
    never = replace(update("h3", 0.0, state=HostState.UNREACHABLE), error="h3: no route to host")
    finding = Finding(Code.MTU_MISMATCH, Severity.WARNING, "h1", "eth0", "MTU differs", "9000 vs 1500", "set it")
    updates = [as_seen(u, 100.4) for u in (live, stopped, never)]
    return _printed(snapshot_json(updates, [finding], now=100.4, own=(4.123, 61.25)))


OUTPUTS: dict[str, Callable[[], str]] = {
    "snapshot": _snapshot,
    "test": _test,
    "matrix": _matrix,
    "diagnose-clean": _diagnose(940e6),
    "diagnose-bottlenecked": _diagnose(94e6),
    "flows": _flows(False),
    "flows-all": _flows(True),
    "test-all-addresses": _addresses,
    "mtu-short-path": _mtu(1400, 1404, 1400, 1500, None),
    "mtu-path-mtu": _mtu(1500, 1500, 9000, 9000, None),
    "mtu-one-way": _mtu(1500, None, 9000, None, "lab-b has no ping with don't-fragment"),
    "mtu-failed": _mtu_failed,
    "parse-ethtool-i": _parse("ethtool -i eth0", "linux/ethtool-i__lolyu-aoi-tg3-debian11.txt"),
    "parse-ifconfig-freebsd": _parse("ifconfig -a", "freebsd/ifconfig__jc-freebsd12-extra-fields-cxl3.txt", "freebsd"),
    "parse-ip-j-addr": _parse("ip -j addr", "linux/captured-ip-j-addr.txt"),
    "parse-ip-s-j-link": _parse("ip -s -j link", "linux/captured-ip-s-j-link.txt"),
    "parse-proc-net-snmp": _parse("cat /proc/net/snmp", "linux/tcp/proc-net-snmp__sysstat-tests-root1.txt"),
    "parse-ss-tin": _parse("ss -tin", "ss/ss-tin__mouse-elephant-jumbo-cubic-iperf.txt"),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_output_is_unchanged(name):
    path = GOLDEN / f"{name}.json"
    text = OUTPUTS[name]()
    if os.environ.get("LINKDECK_GOLDEN_UPDATE"):
        path.write_text(text)
    assert text == path.read_text(), f"{name}: output changed; if meant, rerun with LINKDECK_GOLDEN_UPDATE=1"
