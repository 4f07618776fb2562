"""IllumosAdapter: frames → HostSample, topology, snaptime clock, Solaris fallbacks.

Frames come from the adapter's own sh loop run against tests/replay/illumos/ (executables that
answer with the seed 003 host's real captures) — recorded here by running the real script under
/bin/sh with that directory first on PATH — plus hand-assembled frames for the edge cases.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from linkdeck.core.rates import RateTracker
from linkdeck.parsers import ParseError
from linkdeck.platforms.adapter import split_frames
from linkdeck.platforms.illumos import IllumosAdapter, build_script
from tests.ticks import ticking

REPLAY = Path(__file__).parents[2] / "replay" / "illumos"


def record_frames(tmp_path: Path, count: int, facts_every: int = 2, bin_dir: Path = REPLAY) -> list[dict[str, str]]:
    """Run the adapter's script until ``count`` frames are out, and cut them into sections."""
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LD_REPLAY_STATE": str(tmp_path / "state")}
    lines: list[str] = []
    with ticking(["sh", "-c", build_script(facts_every)], 0.05, text=True, env=env) as proc:
        ends = 0
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("@@LD END"):
                ends += 1
                if ends == count:
                    break
    return split_frames(lines)


def adapter(os_name: str = "smartos", facts_every: int = 2) -> IllumosAdapter:
    return IllumosAdapter(
        runner=None, os_name=os_name, os_detail="SmartOS joyent_20240111T000000Z", facts_every=facts_every
    )


def test_seed003_topology_and_facts(tmp_path):
    frames = record_frames(tmp_path, 1)
    assert set(frames[0]) == {"link", "phys", "mac", "aggr", "vnic", "linkprop", "addr", "route", "route6", "kstat"}
    sample = adapter().parse_frame(frames[0])
    ifs = sample.interfaces
    assert [n for n, i in ifs.items() if i.default_route] == ["aggr0"]
    assert set(ifs) == {"i40e0", "i40e1", "i40e2", "i40e3", "aggr0", "admin0", "admin1"}
    aggr = ifs["aggr0"]
    assert (aggr.kind, aggr.members, aggr.speed_mbps, aggr.mtu) == (
        "bond",
        ("i40e0", "i40e1", "i40e2", "i40e3"),
        40000,
        1500,
    )
    assert aggr.addresses == ("172.30.115.32/24",)
    admin0 = ifs["admin0"]
    assert (admin0.kind, admin0.over, admin0.speed_mbps, admin0.duplex) == ("vnic", "aggr0", 10000, None)
    assert admin0.addresses == ("172.30.115.36/24",)
    assert admin0.mac is None  # -p -o link,over,speed,vid,zone carries no MAC
    port = ifs["i40e2"]
    assert (port.kind, port.oper, port.speed_mbps, port.duplex, port.driver) == (
        "physical",
        "up",
        10000,
        "full",
        "i40e",
    )
    assert ("master", "aggr0") in port.extra
    assert "lo0" not in ifs  # ipadm's loopback is not a datalink
    assert sample.time == pytest.approx(16834735.1607669)
    c = sample.counters["admin0"]
    assert (c.rx_bytes, c.tx_bytes, c.rx_packets, c.bits) == (113983614, 12820668, 682834, 64)


def test_rates_follow_snaptime_and_scripted_advance(tmp_path):
    frames = record_frames(tmp_path, 3)
    assert "link" not in frames[1] and "link" in frames[2]  # facts every 2nd tick
    ad, tracker = adapter(), RateTracker()
    samples = [ad.parse_frame(f) for f in frames]
    assert [s.time - samples[0].time for s in samples] == pytest.approx([0.0, 1.0, 2.0])
    for s in samples:
        views = {v.iface.name: v for v in tracker.update(s)}
    # Second frame has no facts sections: the adapter keeps the facts of the first.
    assert samples[1].interfaces["admin0"].over == "aggr0"
    assert views["aggr0"].rates.rx_bps == pytest.approx(12_500_000 * 8)
    assert views["aggr0"].rates.tx_bps == pytest.approx(5_000_000 * 8)
    assert views["admin1"].rates.rx_bps == pytest.approx(1_250_000 * 8)
    assert views["i40e0"].rates.rx_pps == pytest.approx(3125)
    assert views["aggr0"].util_pct == pytest.approx(100 * 100e6 / 40e9)


def test_facts_are_reread_on_the_tick_a_link_appears(tmp_path):
    """A VNIC created between facts ticks gets its topology on the next frame, not 10 later."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kstat").write_text(
        "#!/bin/sh\n"
        f"n=$(cat {tmp_path}/n 2>/dev/null || echo 0); echo $((n + 1)) > {tmp_path}/n\n"
        "printf 'link:0:net0:rbytes64\\t%d\\nlink:0:net0:snaptime\\t%d.5\\n' $((n * 1000)) $n\n"
        "[ $n -ge 2 ] && printf 'link:0:vnic7:rbytes64\\t%d\\nlink:0:vnic7:snaptime\\t%d.5\\n' $n $n\n"
        "exit 0\n"
    )
    (bin_dir / "dladm").write_text(
        "#!/bin/sh\ncase \"$1\" in show-link) echo 'net0:phys:1500:up:'; echo 'vnic7:vnic:1500:up:net0' ;; esac\n"
    )
    (bin_dir / "ipadm").write_text("#!/bin/sh\nexit 0\n")
    for exe in bin_dir.iterdir():
        exe.chmod(0o755)
    frames = record_frames(tmp_path, 4, facts_every=100, bin_dir=bin_dir)
    assert ["link" in f for f in frames] == [True, False, True, False]
    ad = adapter()
    samples = [ad.parse_frame(f) for f in frames]
    assert set(samples[1].counters) == {"net0"}
    assert samples[2].interfaces["vnic7"].over == "net0"
    assert samples[3].counters["net0"].rx_bytes == 3000
    assert samples[3].time == 3.5


def test_script_is_fixed_text_with_kstat_filter():
    text = build_script(10)
    assert (
        "read -r tick <&3 || break; done" in text
        and "sleep" not in text
        and "facts_every=10;" in text
        and "\n" not in text
    )
    assert (
        "kstat -p 'tcp:0:tcp:/^(outSegs|retransSegs|inSegs|timRetrans|listenDrop|inErrs|outDataSegs)$/' "
        "'link:::/^(rbytes64|obytes64|ipackets64|opackets64|"
    ) in text
    assert "dladm show-vnic -p -o link,over,speed,vid,zone 2>/dev/null || {" in text
    if shutil.which("sh"):
        assert subprocess.run(["sh", "-n", "-c", text]).returncode == 0  # it parses as POSIX sh


KSTAT = (
    "link:0:net0:rbytes64\t1000\nlink:0:net0:obytes64\t2000\nlink:0:net0:ipackets64\t10\n"
    "link:0:net0:opackets64\t20\nlink:0:net0:ifspeed\t1000000000\nlink:0:net0:link_duplex\t2\n"
    "link:0:net0:link_state\t1\nlink:0:net0:snaptime\t500.25\n"
)


def test_solaris11_vnic_fallback_section_and_show_link_without_over():
    frame = {
        "link": "net0:phys:9000:up:\naggr1:aggr:9000:up:net0\nzvnic0:vnic:9000:up:aggr1\n",
        "vnic": "",
        "vnic-min": "zvnic0:aggr1:1000\n",
        "mac": "net0:primary:0\\:15\\:17\\:bb\\:82\\:d2\nnet0:1:2\\:8\\:20\\:0\\:0\\:1\n",
        "kstat": KSTAT,
    }
    sample = adapter("solaris").parse_frame(frame)
    assert sample.interfaces["zvnic0"].over == "aggr1"
    assert sample.interfaces["zvnic0"].speed_mbps == 1000
    assert sample.interfaces["aggr1"].members == ("net0",)
    assert sample.interfaces["net0"].mtu == 9000
    assert sample.interfaces["net0"].duplex == "full"
    assert sample.interfaces["net0"].mac == "00:15:17:bb:82:d2"  # the primary slot, not slot 1
    assert sample.time == 500.25
    assert set(sample.counters) == {"net0"}


def test_missing_or_empty_kstat_is_a_clear_error():
    with pytest.raises(ParseError, match="no kstat section"):
        adapter().parse_frame({"link": "net0:phys:1500:up:\n"})
    with pytest.raises(ParseError, match="Solaris 10"):
        adapter().parse_frame({"kstat": ""})
    with pytest.raises(ParseError, match="rbytes64 is not a number: 'x'"):
        adapter().parse_frame({"kstat": "link:0:net0:rbytes64\tx\n"})


def test_garbled_facts_section_raises_parse_error_naming_command():
    with pytest.raises(ParseError, match="dladm show-link -p -o link,class,mtu,state,over"):
        adapter().parse_frame({"link": "only:two\n", "kstat": KSTAT})
