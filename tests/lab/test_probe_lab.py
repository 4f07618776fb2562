"""Tests between lab hosts: real iperf3 over real SSH between network namespaces, with the
collectors watching both ends.

veth legs report no real link speed (linkdeck shows them as unknown), so the tests that need
an expected figure give one with ``Settings.speed_overrides`` — the same knob a user has for
VMs — and make it true with ``tc tbf`` where the test says the path is that fast.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import subprocess
import sys

import pytest

from linkdeck.core import units
from linkdeck.present.outcome import report_text
from linkdeck.probe import TestTimeout, matrix_json, ordered_pairs, run_test
from linkdeck.probe.pairs import Matrix
from linkdeck.probe.session import EndPool, run_pairs, watching
from linkdeck.probe.watched import figure_seconds
from linkdeck.verdict.shared_path import OWN_SHARE, beyond_noise, framing
from tests.cli import isolated_env, linkdeck
from tests.lab.traffic import tcp_transfer
from tests.lab.wait import until, wait_until
from tests.unit.probe.test_probe import INSTALLED_IPERF3, THIS_MACHINE_HINT

pytestmark = pytest.mark.lab


def specs(lab, *names):
    return {n: lab.spec(n) for n in names}


def no_iperf3(lab, *names) -> bool:
    return all(lab.hosts[n].pgrep("iperf3") == [] for n in names)


async def test_clean_pair_is_ok_at_line_rate(lab) -> None:
    # A 1 Gb/s path for real: both legs shaped to 1000 Mbit/s and told they are 1G links.
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 1000)
    settings = lab.settings(speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    (o,), _ = await run_pairs(specs(lab, "h1", "h2"), settings, [("h1", "h2")], 3)
    r, v = o.result, o.verdict
    assert r.error is None and (o.src_iface, o.dst_iface) == ("eth0", "eth0")
    assert r.address == lab.hosts["h2"].address  # the peer's address in the shared subnet
    assert v.status == "ok", v
    assert v.pct_of_expected >= 90
    assert v.expected_bps == pytest.approx(1e9 * 1448 / 1538)
    assert 0.9e9 < r.forward_bps < 1e9 and 0.9e9 < r.reverse_bps < 1e9
    # the counters saw the same transfer (veth counts few header bytes: GSO)
    for key in ("src_tx", "dst_rx"):
        assert r.counters_bps[key] == pytest.approx(r.forward_bps, rel=0.04)
    for key in ("dst_tx", "src_rx"):
        assert r.counters_bps[key] == pytest.approx(r.reverse_bps, rel=0.04)
    assert o.src.errors_during == 0 and o.dst.errors_during == 0
    assert no_iperf3(lab, "h1", "h2")


async def test_counters_read_around_an_unshaped_test_match_iperf3(lab) -> None:
    # The fastest path the lab has (veth at memory speed, multi-Gb/s): the one-shot reads
    # just before and after the test see the transfer iperf3 measured, in both directions and
    # at both ends, within the counters' own error (the bound that decides whether a test had
    # the path to itself); a clean path gains no errors or drops.
    settings = lab.settings(interval=1.0)
    (o,), _ = await run_pairs(specs(lab, "h1", "h2"), settings, [("h1", "h2")], 3)
    r = o.result
    assert r.error is None and r.forward_bps > 1e9 and r.reverse_bps > 1e9
    scale = framing(r, o.src, o.dst)
    for key, direction in (("src_tx", "forward"), ("dst_rx", "forward"), ("dst_tx", "reverse"), ("src_rx", "reverse")):
        figure = r.forward_bps if direction == "forward" else r.reverse_bps
        assert not beyond_noise(r, r.counters_bps[key] - figure * scale, direction, scale), (
            key,
            r.counters_bps[key],
            figure * scale,
        )
    assert o.verdict.conditions == ()  # the test had the path to itself
    # one path: what one end sent the other received (give or take the collectors' SSH bytes)
    assert r.counters_bps["src_tx"] == pytest.approx(r.counters_bps["dst_rx"], rel=1e-3)
    # the reads bracket exactly the transfer: the bytes on the wire are what iperf3 wrote
    # plus headers and retransmits (a read one collector tick off would be a third more or less)
    forward_s, reverse_s = figure_seconds(r)
    assert r.counters_bps["src_tx"] * forward_s / 8 == pytest.approx(r.raw_end["sum_sent"]["bytes"], rel=OWN_SHARE)
    assert r.counters_bps["dst_tx"] * reverse_s / 8 == pytest.approx(
        r.raw_end["sum_sent_bidir_reverse"]["bytes"], rel=OWN_SHARE
    )
    assert (o.src.errors_during, o.dst.errors_during, o.src.drops_during, o.dst.drops_during) == (0, 0, 0, 0)
    # no link speeds: nothing to fall short of, so nothing the path's speed could be blamed
    # for; retransmits a busy machine's veths really dropped are the verdict's to name
    assert all(c.code == "RETRANSMITS" for c in o.verdict.causes), o.verdict
    assert o.timings["counters_before"] < o.timings["result"] <= o.timings["counters_after"] <= o.timings["verdict"]


async def test_a_pair_faster_than_its_speed_figure_says_the_figure_is_wrong(lab) -> None:
    # A 500 Mbit/s path whose h2 end is said to be 100 Mb/s: that cannot be true (issue 10.6).
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 500)
    settings = lab.settings(speed_overrides={"h1/eth0": 10000, "h2/eth0": 100})
    (o,), _ = await run_pairs(specs(lab, "h1", "h2"), settings, [("h1", "h2")], 2)
    r, v = o.result, o.verdict
    assert 400e6 < r.forward_bps < 500e6 and 400e6 < r.reverse_bps < 500e6
    assert (v.status, v.expected_bps, v.pct_of_expected) == ("ok", None, None)
    assert [c.code for c in v.causes] == ["SPEED_WRONG"]
    assert (
        v.summary
        == "measured above the 100 Mb/s h2 eth0 reports: the speed figure is wrong; check `[speed]` or the driver"
    )
    assert "reached —" in report_text(o)


async def test_shaped_path_between_10g_ends_is_a_bottleneck(lab) -> None:
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 100)
    settings = lab.settings(speed_overrides={"h1/eth0": 10000, "h2/eth0": 10000})
    (o,), _ = await run_pairs(specs(lab, "h1", "h2"), settings, [("h1", "h2")], 3)
    r, v = o.result, o.verdict
    assert v.status == "bad"
    assert 85e6 < r.forward_bps < 100e6 and 85e6 < r.reverse_bps < 100e6
    bottleneck = [c for c in v.causes if c.code == "BOTTLENECK"]
    assert len(bottleneck) == 1
    assert "below both 10 Gb/s links" in bottleneck[0].message and "Mb/s" in bottleneck[0].message
    assert "about what a 100 Mb/s hop carries" in bottleneck[0].evidence


async def test_mtu_mismatch_in_one_subnet_is_in_the_verdict(make_lab) -> None:
    with make_lab({"a": {"mtu": 1500}, "b": {"mtu": 9000}}) as lab:
        (o,), _ = await run_pairs(specs(lab, "a", "b"), lab.settings(), [("a", "b")], 2)
    assert (o.src.iface.mtu, o.dst.iface.mtu) == (1500, 9000)
    mtu = [c for c in o.verdict.causes if c.code == "MTU_MISMATCH"]
    assert len(mtu) == 1 and mtu[0].message == "MTU 9000 vs 1500 in one subnet"
    assert "a eth0 MTU 1500, b eth0 MTU 9000" in mtu[0].evidence


async def test_cancel_mid_test_leaves_no_iperf3_on_either_host(lab) -> None:
    pool = EndPool(lab.settings())
    try:
        h1, h2 = await pool.get(lab.spec("h1")), await pool.get(lab.spec("h2"))
        task = asyncio.create_task(run_test(h1, h2, lab.hosts["h2"].address, 20))
        for _ in range(200):
            if lab.hosts["h1"].pgrep("iperf3") and lab.hosts["h2"].pgrep("iperf3"):
                break
            await asyncio.sleep(0.05)
        assert lab.hosts["h1"].pgrep("iperf3") and lab.hosts["h2"].pgrep("iperf3")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert no_iperf3(lab, "h1", "h2")
    finally:
        await pool.close()


async def test_timeout_leaves_no_iperf3_on_either_host(lab) -> None:
    pool = EndPool(lab.settings())
    try:
        h1, h2 = await pool.get(lab.spec("h1")), await pool.get(lab.spec("h2"))
        with pytest.raises(TestTimeout, match=r"h1 → h2 did not finish within 3 s"):
            await run_test(h1, h2, lab.hosts["h2"].address, 8, timeout=3)
        assert no_iperf3(lab, "h1", "h2")
    finally:
        await pool.close()


async def test_host_without_iperf3_gets_the_install_hint(make_lab, tmp_path) -> None:
    with make_lab({"a": {}, "b": {"iperf3": False}}) as lab:
        (o,), _ = await run_pairs(specs(lab, "a", "b"), lab.settings(), [("a", "b")], 1)
        assert no_iperf3(lab, "a", "b")
        config = tmp_path / "linkdeck.toml"
        config.write_text(f'known_hosts = "{lab.known_hosts}"\n')
        proc = await asyncio.to_thread(
            linkdeck, "test", "a", "b", "--time", "1", "--config", str(config), "--ssh-config", str(lab.ssh_config)
        )
    assert o.verdict.status == "error"
    hint = THIS_MACHINE_HINT  # lab hosts share this machine's /etc/os-release
    assert o.result.error == f"iperf3 not found on b: `{hint}`"
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"  verdict: ERROR — test failed: iperf3 not found on b: `{hint}`" in proc.stdout.splitlines()


async def test_unreachable_peer_address_is_a_clear_error(lab) -> None:
    pool = EndPool(lab.settings())
    try:
        h1, h2 = await pool.get(lab.spec("h1")), await pool.get(lab.spec("h2"))
        # An address no lab host has, inside the lab's own subnet: nothing answers.
        address = lab.hosts["h3"].address.rsplit(".", 1)[0] + ".250"
        from linkdeck.probe import PeerUnreachable

        with pytest.raises(PeerUnreachable, match=rf"h2 \({address}\) port 5201 is not reachable from h1"):
            await run_test(h1, h2, address, 1)
        assert no_iperf3(lab, "h1", "h2")
    finally:
        await pool.close()


async def test_matrix_over_three_hosts_fills_all_six_cells(lab) -> None:
    names = ["h1", "h2", "h3"]
    pairs = ordered_pairs(names)
    outcomes, _ = await run_pairs(specs(lab, *names), lab.settings(), pairs, 1)
    matrix = Matrix(names, dict(zip(pairs, outcomes)))
    assert sorted(matrix.cells) == sorted(pairs) and len(pairs) == 6
    for (src, dst), o in matrix.cells.items():
        assert (o.result.src, o.result.dst) == (src, dst)
        assert o.result.error is None and o.result.forward_bps > 1e8 and o.result.reverse_bps > 1e8
        assert o.result.address == lab.hosts[dst].address
    doc = matrix_json(matrix)
    assert [(c["src"], c["dst"]) for c in doc["cells"]] == pairs
    assert no_iperf3(lab, *names)


async def test_ceiling_of_one_host_over_loopback(lab) -> None:
    (o,), _ = await run_pairs(specs(lab, "h3"), lab.settings(), [("h3", "h3")], 1)
    r = o.result
    assert (r.address, o.src_iface, o.dst_iface) == ("127.0.0.1", "lo", "lo")
    assert r.forward_bps > 1e9 and r.reverse_bps is None
    assert r.counters_bps["src_tx"] == pytest.approx(r.forward_bps, rel=0.1)
    # veth legs report no speed: the figure alone, not "sender CPU-bound" (issue 10.6)
    assert (o.verdict.status, o.verdict.causes) == ("ok", ())
    assert o.verdict.summary == f"ceiling {units.rate(r.forward_bps)} over loopback; link speeds unknown"


async def test_ceiling_is_judged_against_the_hosts_fastest_link(lab) -> None:
    # Seed 002's question on a lab host (several Gb/s over loopback): a 1 Gb/s eth0 is no
    # challenge, a 100 Gb/s one is out of its reach.
    runs = {}
    for mbps in (1000, 100_000):
        settings = lab.settings(speed_overrides={"h3/eth0": mbps})
        (runs[mbps],), _ = await run_pairs(specs(lab, "h3"), settings, [("h3", "h3")], 1)
    fine, short = runs[1000], runs[100_000]
    bps = fine.result.forward_bps
    assert fine.verdict.status == "ok" and fine.verdict.causes == ()
    times = bps / 1e9
    assert fine.verdict.summary == (
        f"ceiling {units.rate(bps)}, {times:.0f}× its fastest link (1 Gb/s): the host is not the limit"
        if times >= 10
        else f"ceiling {units.rate(bps)}, {times:.1f}× its fastest link (1 Gb/s): the host is not the limit"
    )
    bps = short.result.forward_bps
    assert short.verdict.status == "bad" and [c.code for c in short.verdict.causes] == ["CEILING_LOW"]
    assert short.verdict.summary == f"this host cannot fill its 100 Gb/s link: {units.rate(bps)} over loopback"
    assert short.verdict.causes[0].evidence.startswith("h3 eth0 (100 Gb/s, MTU 1500) carries 94.1 Gb/s of TCP;")


def test_cli_test_json_between_lab_hosts(lab, tmp_path) -> None:
    config = tmp_path / "linkdeck.toml"
    # 100G: above anything a veth pair carries here, so the figure stands (a test above an end's
    # speed says the figure is wrong and has no expected rate; unshaped veths pass 10G)
    config.write_text(f'known_hosts = "{lab.known_hosts}"\n[speed]\n"h1/eth0" = 100000\n"h2/eth0" = 100000\n')
    proc = linkdeck(
        "test", "h1", "h2", "--json", "--time", "2", "--config", str(config), "--ssh-config", str(lab.ssh_config)
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {
        "schema_version",
        "src",
        "dst",
        "address",
        "duration_s",
        "forward_bps",
        "reverse_bps",
        "retransmits",
        "forward_retransmits",
        "reverse_retransmits",
        "rtt_ms",
        "cpu",
        "expected_bps",
        "pct_of_expected",
        "forward_pct",
        "reverse_pct",
        "verdict",
        "conditions",
        "causes",
        "counters_bps",
        "path_mtu",
        "iperf3_version",
        "streams",
        "intervals",
        "alone",
        "iperf3",
    }
    assert (doc["iperf3_version"], doc["streams"], doc["intervals"]) == (
        {"src": INSTALLED_IPERF3, "dst": INSTALLED_IPERF3},
        1,
        [],
    )
    assert (doc["src"], doc["dst"], doc["address"]) == ("h1", "h2", lab.hosts["h2"].address)
    assert doc["path_mtu"] == {"forward": 1500, "reverse": 1500}  # a clean pair: the path carries the MTU
    assert 1.9 < doc["duration_s"] < 2.5
    assert doc["forward_bps"] > 1e8 and doc["reverse_bps"] > 1e8
    assert doc["expected_bps"] == pytest.approx(1e11 * 1448 / 1538)
    assert doc["verdict"] in ("ok", "degraded", "bad") and set(doc["cpu"]) == {"src", "dst"}
    assert set(doc["counters_bps"]) == {"src_tx", "src_rx", "dst_tx", "dst_rx"} and doc["counters_bps"]["src_tx"] > 1e8
    assert "sum_sent_bidir_reverse" in doc["iperf3"]
    assert no_iperf3(lab, "h1", "h2")


def test_cli_matrix_csv_over_three_lab_hosts(lab, tmp_path) -> None:
    config = tmp_path / "linkdeck.toml"
    config.write_text(f'known_hosts = "{lab.known_hosts}"\n')
    proc = linkdeck(
        "matrix",
        "--csv",
        "--time",
        "1",
        "--config",
        str(config),
        "--ssh-config",
        str(lab.ssh_config),
        "h1",
        "h2",
        "h3",
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [(r["sender"], r["receiver"]) for r in rows] == [("h1", "h2"), ("h1", "h3"), ("h2", "h3")]  # each pair once
    assert all(float(r["forward_bps"]) > 1e8 and r["verdict"] in ("ok", "degraded", "bad") for r in rows)
    assert no_iperf3(lab, "h1", "h2", "h3")


async def test_a_test_beside_a_running_transfer_says_the_path_was_shared(lab) -> None:
    # The order users work in: h1 → h2 is slow (a 100 Mbit/s hop between 1 Gb/s ends) and
    # still running when the test starts. iperf3 gets a share of the hop; the counters at
    # h2 eth0 carried the rest, and the verdict says so first, judging the path on the whole.
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 100)
    settings = lab.settings(speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]
    with tcp_transfer(h2.popen, h1.popen, h2.address, seconds=60):
        (o,), _ = await run_pairs(specs(lab, "h1", "h2"), settings, [("h1", "h2")], 3)
    r, v = o.result, o.verdict
    assert r.error is None and r.forward_bps < 80e6  # iperf3 got a share of the hop
    assert [c.code for c in v.conditions] == ["SHARED_PATH"], v
    assert re.fullmatch(
        r"another \d+(\.\d)? Mb/s crossed h[12] eth0 during the test: the path was shared", v.conditions[0].message
    )
    other = float(v.conditions[0].message.split()[1])
    assert other > 15  # the transfer's share, beyond the counters' own error
    assert v.summary.startswith(v.conditions[0].message + "; the path carried ")
    assert v.summary.endswith("about what a 100 Mb/s hop carries")
    assert v.pct_of_expected is None
    codes = [c.code for c in v.causes]
    assert not {"ALONE_ALSO_SLOW", "BIDIR_ONLY", "ASYMMETRY", "RETRANSMITS"} & set(codes), codes
    assert r.alone is None  # no each-alone check beside other traffic
    # judged on what the hop carried in all: a bottleneck near 100 Mb/s, not near iperf3's share
    bottleneck = next(c for c in v.causes if c.code == "BOTTLENECK")
    near = float(bottleneck.message.split()[3])
    assert 80 < near < 100 and bottleneck.message.endswith("Mb/s in all below both 1 Gb/s links")
    assert v.status == "bad"


async def test_two_tests_through_one_host_in_one_session_run_one_after_the_other(lab) -> None:
    # the dashboard's t pressed twice: the second waits for the first, says so, and neither
    # measures the other
    settings = lab.settings(test_duration=2)
    said: list[str] = []
    async with watching(specs(lab, "h1", "h2"), settings, ["h1", "h2"]) as (watch, session):
        await until(lambda: all(watch.latest(h) is not None for h in ("h1", "h2")), "both hosts sampled")
        first = asyncio.create_task(session.run_pair("h1", "h2", duration=2))
        await until(lambda: lab.hosts["h2"].pgrep("iperf3") != [], "the first test's server running")
        second = await session.run_pair("h2", "h1", duration=2, on_phase=said.append)
        one = await first
    assert "waiting for the test through h1 to end" in said or "waiting for the test through h2 to end" in said
    assert second.timings["start"] >= one.timings["verdict"]  # never both at once
    for o in (one, second):
        assert o.result.error is None and o.verdict.conditions == (), o.verdict


def test_a_second_linkdeck_test_waits_for_the_first_one_on_the_host(lab, tmp_path) -> None:
    # two `linkdeck test` processes: the second finds the first's connections on iperf3's
    # ports at h2, waits for them to end, and then measures the path alone
    config = tmp_path / "linkdeck.toml"
    config.write_text(f'known_hosts = "{lab.known_hosts}"\n')
    argv = [
        sys.executable,
        "-m",
        "linkdeck",
        "test",
        "h1",
        "h2",
        "--json",
        "--time",
        "4",
        "--config",
        str(config),
        "--ssh-config",
        str(lab.ssh_config),
    ]
    first = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=isolated_env())
    try:
        wait_until(lambda: lab.hosts["h2"].pgrep("iperf3") != [], timeout=30, message="the first test's server running")
        second = linkdeck(
            "test",
            "h3",
            "h2",
            "--json",
            "--time",
            "2",
            "--config",
            str(config),
            "--ssh-config",
            str(lab.ssh_config),
            timeout=120,
        )
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first.returncode == 0, err
    assert second.returncode == 0, second.stderr
    a, b = json.loads(out), json.loads(second.stdout)
    # neither found the other running (ANOTHER_TEST) nor its bytes beside it (SHARED_PATH)
    assert a["conditions"] == [] and b["conditions"] == [], (a["conditions"], b["conditions"])
    # and neither was slowed by it; retransmits a busy machine's veths really dropped are the
    # verdict's to name, not what this test is about
    for doc in (a, b):
        assert {c["code"] for c in doc["causes"]} <= {"RETRANSMITS"}, doc["causes"]


async def test_a_clean_pair_beside_a_transfer_is_shared_and_not_slow(lab) -> None:
    # a 1 Gb/s path with someone's transfer on it: iperf3 gets a share, the path in all is
    # what a clean 1 Gb/s path carries, so no cause, and the condition says why the share
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 1000)
    settings = lab.settings(speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]
    with tcp_transfer(h2.popen, h1.popen, h2.address, seconds=60):
        (o,), _ = await run_pairs(specs(lab, "h1", "h2"), settings, [("h1", "h2")], 3)
    v = o.verdict
    assert [c.code for c in v.conditions] == ["SHARED_PATH"], v
    assert v.status == "ok" and v.causes == (), v
    assert v.summary.endswith("about what a 1 Gb/s hop carries"), v.summary
