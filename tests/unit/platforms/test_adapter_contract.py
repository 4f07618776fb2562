"""Every adapter, over every fixture set, returns the same shapes in the same units.

Frames come from each adapter's own sh loop run by /bin/sh — against this machine's real
/proc and /sys for Linux, and against the replay commands (real captures, advancing counters)
for FreeBSD and SmartOS — plus frames assembled from the corpus captures of other OSes.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from linkdeck.core.kinds import Kind
from linkdeck.core.model import COUNTER_FIELDS, KINDS, Counters, HostSample, Interface
from linkdeck.core.rates import RateTracker
from linkdeck.parsers import ParseError
from linkdeck.platforms.adapter import FRAME_END, split_frames
from linkdeck.platforms.bsd import BsdAdapter
from linkdeck.platforms.illumos import IllumosAdapter
from linkdeck.platforms.linux import LinuxAdapter
from tests.corpus import fixture
from tests.ticks import ticking

TESTS = Path(__file__).parents[2]


def run_loop(adapter, tmp_path: Path, frames: int, bin_dir: Path | None) -> list[dict[str, str]]:
    path = f"{bin_dir}:{os.environ['PATH']}" if bin_dir else os.environ["PATH"]
    env = {**os.environ, "PATH": path, "HOME": str(tmp_path), "LD_REPLAY_STATE": str(tmp_path / "state")}
    lines: list[str] = []
    with ticking(["sh", "-c", adapter.script()], 0.1, text=True, env=env) as proc:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines[-1] == FRAME_END and lines.count(FRAME_END) == frames:
                break
    return split_frames(lines)


def frame_sets(tmp_path: Path):
    """(label, adapter, frames) for every adapter and every set of real outputs we hold."""
    linux = LinuxAdapter(runner=None, facts_every=2)
    yield "linux-live", linux, run_loop(linux, tmp_path / "linux", 3, None)
    freebsd = BsdAdapter(None, "freebsd", "FreeBSD 14.1-RELEASE", facts_every=2)
    yield "freebsd-replay", freebsd, run_loop(freebsd, tmp_path / "bsd", 3, TESTS / "replay" / "bsd")
    smartos = IllumosAdapter(None, "smartos", "SmartOS", facts_every=2)
    yield "smartos-replay", smartos, run_loop(smartos, tmp_path / "illumos", 3, TESTS / "replay" / "illumos")
    macos = BsdAdapter(None, "macos", "macOS", facts_every=1)
    yield (
        "macos-capture",
        macos,
        [
            {
                "time": "1700000000.5\n",
                "netstat": fixture("macos/netstat-i-d-l-b-n__ohai-darwin-spec.txt"),
                "ifconfig": fixture("macos/ifconfig-a__ohai-darwin-spec.txt"),
            }
        ],
    )
    freebsd12 = BsdAdapter(None, "freebsd", None, facts_every=1)
    yield "freebsd12-capture", freebsd12, [{"time": "1\n", "netstat": fixture("freebsd/netstat-ib__jc-freebsd12.txt")}]


def check_interface(label: str, name: str, iface: Interface) -> None:
    where = f"{label}/{name}"
    assert iface.name == name, where
    assert isinstance(iface.kind, Kind) and iface.kind in KINDS, where
    assert isinstance(iface.oper, str) and iface.oper, where
    assert iface.mtu is None or 68 <= iface.mtu <= 65536 + 256, where  # 65536 is Linux lo
    assert iface.speed_mbps is None or (isinstance(iface.speed_mbps, int) and 1 <= iface.speed_mbps <= 800_000), where
    if iface.kind in ("loopback", "bridge", "tunnel"):
        assert iface.speed_mbps is None, f"{where}: made-up speed on a {iface.kind}"
    assert iface.duplex in (None, "full", "half"), where
    for cidr in iface.addresses:
        ipaddress.ip_interface(cidr)  # raises on anything that is not addr/prefix
        assert "/" in cidr, where
    assert all(isinstance(s, int) and s > 0 for s in iface.supported_speeds_mbps), where
    assert all(isinstance(v, int) for v in iface.nic_counters.values()), where
    for ring in (iface.ring_rx, iface.ring_rx_max, iface.ring_tx, iface.ring_tx_max):
        assert ring is None or ring > 0, where
    if iface.over is not None:
        assert iface.over != name, where


def check_counters(label: str, name: str, c: Counters) -> None:
    assert isinstance(c, Counters)
    for field_name in COUNTER_FIELDS:
        value = getattr(c, field_name)
        assert value is None or (isinstance(value, int) and value >= 0), f"{label}/{name}.{field_name}={value!r}"
    assert c.bits in (None, 32, 64)


def test_every_adapter_returns_the_same_shapes(tmp_path):
    seen = []
    for label, adapter, frames in frame_sets(tmp_path):
        assert frames, label
        tracker = RateTracker()
        samples = [adapter.parse_frame(f) for f in frames]
        for sample in samples:
            assert isinstance(sample, HostSample)
            assert isinstance(sample.time, float) and sample.time > 0, label
            assert sample.interfaces, label
            names = set(sample.interfaces)
            for name, iface in sample.interfaces.items():
                check_interface(label, name, iface)
            # counters only for interfaces the sample describes, and in one shape
            assert set(sample.counters) <= names, label
            for name, counters in sample.counters.items():
                check_counters(label, name, counters)
            views = tracker.update(sample)
            for view in views:
                for rate in (view.rates.rx_bps, view.rates.tx_bps, view.rates.rx_pps, view.rates.tx_pps):
                    assert rate is None or rate >= 0, label
                assert view.util_pct is None or view.util_pct >= 0
        if label == "linux-live":  # the remote Linux sampler sees what psutil sees here
            import psutil

            assert set(samples[-1].interfaces) >= {"lo"} and samples[-1].interfaces["lo"].kind == "loopback"
            assert set(samples[-1].interfaces) & set(psutil.net_if_stats()) == set(samples[-1].interfaces)
        times = [s.time for s in samples]
        assert times == sorted(times), f"{label}: the sample clock went backwards"
        seen.append(label)
    assert seen == ["linux-live", "freebsd-replay", "smartos-replay", "macos-capture", "freebsd12-capture"]


def test_replayed_hosts_yield_rates_in_bits_per_second(tmp_path):
    """Units agree across adapters: each replay advances its busiest link by a known number of
    bytes per call, and every adapter turns that into bit/s the same way."""
    for label, adapter, frames in frame_sets(tmp_path):
        if not label.endswith("replay"):
            continue
        tracker = RateTracker()
        views = [tracker.update(adapter.parse_frame(f)) for f in frames]
        busiest = max(views[-1], key=lambda v: v.rates.rx_bps or 0)
        assert busiest.rates.rx_bps and busiest.rates.rx_bps > 1e6, label
        # bytes counted since start × 8 / elapsed = the average rate in bit/s
        elapsed = frames and (adapter.parse_frame(frames[-1]).time - adapter.parse_frame(frames[0]).time)
        assert busiest.totals.rx_bytes * 8 / elapsed == pytest.approx(busiest.rates.rx_bps, rel=0.25), label


ADAPTERS = {
    "linux": (lambda: LinuxAdapter(runner=None), ("uptime", "net_dev", "sysfs")),
    "freebsd": (lambda: BsdAdapter(None, "freebsd"), ("time", "netstat", "ifconfig")),
    "macos": (lambda: BsdAdapter(None, "macos"), ("time", "netstat", "ifconfig")),
    "smartos": (lambda: IllumosAdapter(None, "smartos"), ("kstat", "link", "phys", "addr")),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.sampled_from(sorted(ADAPTERS)),
    bodies=st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200), min_size=4, max_size=4
    ),
)
def test_garbled_frames_raise_only_parse_errors(which, bodies):
    make, sections = ADAPTERS[which]
    adapter = make()
    frame = dict(zip(sections, bodies))
    try:
        sample = adapter.parse_frame(frame)
    except ParseError as exc:
        assert str(exc)  # a message the host row can show
    else:
        assert isinstance(sample, HostSample)


@pytest.mark.skipif(not shutil.which("tcsh"), reason="needs tcsh (apt-get install tcsh) to play a csh login shell")
@pytest.mark.parametrize("which", ["linux", "freebsd", "smartos"])
def test_sampler_survives_a_csh_login_shell(which, tmp_path):
    """sshd hands the command line to the login shell; root's is csh on FreeBSD <= 13 and on
    TrueNAS CORE, and csh rejects a newline inside quotes. Run exactly what SshRunner sends
    (shlex.join of the argv) through tcsh -c, as sshd would, and read two frames."""
    adapters = {
        "linux": (LinuxAdapter(runner=None, facts_every=2), None),
        "freebsd": (BsdAdapter(None, "freebsd", facts_every=2), TESTS / "replay" / "bsd"),
        "smartos": (IllumosAdapter(None, "smartos", facts_every=2), TESTS / "replay" / "illumos"),
    }
    adapter, bin_dir = adapters[which]
    script = adapter.script()
    assert "\n" not in script
    path = f"{bin_dir}:{os.environ['PATH']}" if bin_dir else os.environ["PATH"]
    env = {**os.environ, "PATH": path, "HOME": str(tmp_path), "LD_REPLAY_STATE": str(tmp_path / "state")}
    lines: list[str] = []
    argv = ["tcsh", "-c", shlex.join(["sh", "-c", script])]
    with ticking(argv, 0.1, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True) as proc:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count(FRAME_END) == 2:
                break
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever of the loop the stdin's EOF has not ended yet
    err = proc.stderr.read()
    frames = split_frames(lines)
    assert len(frames) == 2, err
    samples = [adapter.parse_frame(f) for f in frames]
    assert samples[1].time > samples[0].time and samples[1].interfaces


def test_a_parser_slip_is_one_bad_frame_not_a_dropped_host():
    """An exception a parser did not anticipate becomes a SampleError for that frame; the next
    frame is read as usual."""
    import asyncio

    from linkdeck.platforms.adapter import FRAME_BEGIN, SECTION, SampleError, StreamingAdapter

    class Flaky(StreamingAdapter):
        def script(self):
            return "true"

        def parse_frame(self, sections):
            if sections["x"].strip() == "bad":
                return {}["missing"]
            return HostSample(time=float(sections["x"]), interfaces={}, counters={})

    class Lines:
        def stream(self, argv, tick=None):
            async def gen():
                for body in ("1", "bad", "2"):
                    for line in (FRAME_BEGIN, SECTION + "x", body, FRAME_END):
                        yield line

            return gen()

    async def collect():
        return [item async for item in Flaky(Lines()).samples(1)]

    got = asyncio.run(collect())
    assert isinstance(got[0], HostSample) and got[0].time == 1.0
    assert isinstance(got[1], SampleError) and "KeyError" in got[1].message
    assert isinstance(got[2], HostSample) and got[2].time == 2.0


def test_a_frame_without_end_is_cut_off():
    import asyncio

    from linkdeck.platforms import adapter as base
    from linkdeck.transport.runner import ConnectionLost

    async def endless():
        yield base.FRAME_BEGIN
        while True:
            yield "x"

    async def run():
        async for _ in base.read_frames(endless()):
            pass

    with pytest.raises(ConnectionLost, match="without its end marker"):
        asyncio.run(run())


def test_with_kept_of_a_ticks_frame_is_the_plain_rule():
    """with_kept answers a frame of tick sections alone without looking for kept groups; for
    every adapter, and for one (constructed) whose tick section is in a kept group, it gives
    what the rule gives for any frame."""
    import random

    class TickKept(LinuxAdapter):
        TICK_SECTIONS = frozenset(("tick", "ethtool_k lo"))

    def plain(adapter, kept, frame):
        groups = {k.partition(" ")[0] for k in frame} & adapter.KEPT_SECTIONS
        if groups:
            kept = {
                k: v
                for k, v in {**kept, **frame}.items()
                if k.partition(" ")[0] in adapter.KEPT_SECTIONS and (k in frame or k.partition(" ")[0] not in groups)
            }
        return kept, frame if frame.keys() <= adapter.TICK_SECTIONS else {**kept, **frame}

    rng = random.Random(41)
    for adapter in (LinuxAdapter(), BsdAdapter(), IllumosAdapter(), TickKept()):
        names = sorted(adapter.TICK_SECTIONS | adapter.KEPT_SECTIONS | {"ethtool_k eth0", "ethtool_k lo", "attrs"})
        kept: dict[str, str] = {}
        for i in range(300):
            ticks = sorted(adapter.TICK_SECTIONS)
            frame = {k: f"{k} {i}\n" for k in (ticks if rng.random() < 0.6 else rng.sample(names, rng.randrange(1, 4)))}
            want = plain(adapter, kept, frame)
            got = adapter.with_kept(kept, frame)
            assert got == want, (type(adapter).__name__, frame)
            kept = got[0]
