"""The samplers' sh and awk files: filled only with plain values, sent as one line, and run
for real under each pair of shell and awk a small or a large Linux has: the Linux ones over
this machine, the BSD and illumos ones over the replayed commands of tests/replay/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from linkdeck.core.model import HostSample
from linkdeck.flows.sampler import RoundReader, illumos_script, linux_script
from linkdeck.parsers import connstat
from linkdeck.platforms import script_text
from linkdeck.platforms.adapter import SampleError, StreamingAdapter, split_frames
from linkdeck.platforms.bsd import BsdAdapter
from linkdeck.platforms.illumos import IllumosAdapter
from linkdeck.platforms.linux import LinuxAdapter, build_script
from tests.corpus import FIXTURES, fixture
from tests.ticks import ticking

SCRIPTS = Path(script_text.__file__).parent / "scripts"
REPLAY = Path(__file__).parents[2] / "replay"
# busybox sh + busybox awk (OpenWrt, Alpine, NAS firmware), dash + mawk (Debian, Ubuntu),
# bash + gawk (the rest)
PAIRS = [("busybox sh", "busybox awk"), ("dash", "mawk"), ("bash", "gawk")]


def test_a_value_that_could_end_a_quote_is_refused() -> None:
    with pytest.raises(ValueError, match="plain"):
        script_text.fill("echo '@X@'", {"X": "a'; id; '"})
    with pytest.raises(ValueError, match="values for"):
        script_text.fill("echo '@X@ @Y@'", {"X": "a"})
    assert script_text.fill("n=@N@; echo '@X@'", {"N": 3, "X": "@@LD BEGIN"}) == "n=3; echo '@@LD BEGIN'"


@pytest.mark.parametrize("name", sorted(p.name for p in SCRIPTS.iterdir() if p.suffix in (".sh", ".awk")))
def test_every_script_file_makes_one_line_with_no_bang_and_comments_alone(name: str) -> None:
    text = script_text.source(name)
    line = script_text.sh_line(text) if name.endswith(".sh") else script_text.awk_line(text)
    assert "\n" not in line and "!" not in line and "\\\\" not in line
    code = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert not [ln for ln in code if " # " in ln], "a comment after code would swallow the rest of the line"


def _awk_dir(tmp_path: Path, awk: str, names: tuple[str, ...] = ("awk",)) -> Path:
    """A directory whose `awk` (and each of ``names``: illumos's sampler asks for `nawk`) is
    the one wanted, to put first on the sampler's PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program, *applet = awk.split()
    target = shutil.which(program)
    assert target is not None
    for name in names:
        if applet:
            (bin_dir / name).write_text(f'#!/bin/sh\nexec {target} awk "$@"\n')
            (bin_dir / name).chmod(0o755)
        else:
            (bin_dir / name).symlink_to(target)
    return bin_dir


@pytest.mark.parametrize(("shell", "awk"), PAIRS, ids=["-".join(p).replace(" ", "_") for p in PAIRS])
def test_the_linux_sampler_runs_under_each_shell_and_awk(tmp_path: Path, shell: str, awk: str) -> None:
    if not all(shutil.which(x.split()[0]) for x in (shell, awk)):
        pytest.skip(f"{shell} or {awk} is not installed")
    env = dict(os.environ, PATH=f"{_awk_dir(tmp_path, awk)}:{os.environ['PATH']}")
    lines: list[str] = []
    with ticking([*shell.split(), "-c", build_script(2)], 0.05, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= 4:
                break
    frames = split_frames(lines)
    adapter = LinuxAdapter(runner=None)
    samples = [adapter.parse_frame(f) for f in frames]
    assert "ip_addr" in frames[0] and "tcp_names" in frames[0] and "attrs" in frames[2]
    assert any(line.startswith("@@LD SAME ") for line in lines)  # the delta filter ran
    assert all(s.counters["lo"].rx_bytes is not None and s.tcp is not None for s in samples)
    assert samples[-1].time > samples[0].time


@pytest.mark.parametrize(("shell", "awk"), PAIRS, ids=["-".join(p).replace(" ", "_") for p in PAIRS])
def test_the_reference_without_tcp_reads_no_tcp_file_and_sends_no_tcp_line(
    tmp_path: Path, shell: str, awk: str
) -> None:
    """build_script(tcp=False), bench_tcp.py's reference: the same frames but for the TCP
    counters, under each shell and awk."""
    if not all(shutil.which(x.split()[0]) for x in (shell, awk)):
        pytest.skip(f"{shell} or {awk} is not installed")
    script = build_script(2, tcp=False)
    assert "/proc/net/snmp" not in script and "/proc/net/netstat" not in script
    assert "/proc/net/snmp" in build_script(2) and "/proc/net/netstat" in build_script(2)
    env = dict(os.environ, PATH=f"{_awk_dir(tmp_path, awk)}:{os.environ['PATH']}")
    lines: list[str] = []
    with ticking([*shell.split(), "-c", script], 0.05, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= 4:
                break
    frames = split_frames(lines)
    adapter = LinuxAdapter(runner=None)
    samples = [adapter.parse_frame(f) for f in frames]
    assert not [
        ln for ln in lines if ln.startswith(("tcp:", "@@LD TCP", "@@LD SHIFTS", "/proc/net/snmp", "/proc/net/netstat"))
    ]
    assert frames[0]["tcp_names"].strip() == "" and "attrs" in frames[2]
    assert all(s.counters["lo"].rx_bytes is not None and s.tcp is None for s in samples)


def test_a_busybox_host_without_ip_j_still_gets_its_addresses_and_macs(tmp_path: Path) -> None:
    """busybox's sh, awk and ip (no -j) first on PATH, as on OpenWrt or Alpine: the addresses
    and MACs come from `ip addr` text."""
    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("busybox is not installed")
    bin_dir = _awk_dir(tmp_path, "busybox awk")
    (bin_dir / "ip").symlink_to(busybox)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    lines: list[str] = []
    with ticking([busybox, "sh", "-c", build_script(2)], 0.05, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= 1:
                break
    (frame,) = split_frames(lines)
    assert "ip_addr_text" in frame
    sample = LinuxAdapter(runner=None).parse_frame(frame)
    assert "127.0.0.1/8" in sample.interfaces["lo"].addresses
    macs = {
        n: i.mac for n, i in sample.interfaces.items() if Path(f"/sys/class/net/{n}/type").read_text().strip() == "1"
    }
    assert macs and all(mac and len(mac) == 17 for mac in macs.values()), macs
    # the default route from /proc/net/route, the same link iproute2's ip names
    (route,) = json.loads(
        subprocess.run(["ip", "-j", "route", "show", "default"], capture_output=True, text=True, check=True).stdout
    )
    assert [n for n, i in sample.interfaces.items() if i.default_route] == [route["dev"]]


def _one_frame_without_ip(tmp_path: Path, ifconfig: str | None) -> dict[str, str]:
    """The first frame of the real sampler under busybox sh and awk on a host whose `ip` is not
    found (status 127, as sh says), and whose `ifconfig` is busybox's (``ifconfig="busybox"``)
    or not found either. The sampler adds sbin to PATH, so the stand-ins go first."""
    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("busybox is not installed")
    bin_dir = _awk_dir(tmp_path, "busybox awk")
    for tool in ("ip", "ifconfig"):
        if tool == "ifconfig" and ifconfig == "busybox":
            (bin_dir / tool).write_text(f'#!/bin/sh\nexec {busybox} ifconfig "$@"\n')
        else:
            (bin_dir / tool).write_text(f"#!/bin/sh\necho 'sh: {tool}: not found' >&2\nexit 127\n")
        (bin_dir / tool).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    lines: list[str] = []
    with ticking([busybox, "sh", "-c", build_script(2)], 0.05, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= 1:
                break
    (frame,) = split_frames(lines)
    return frame


def test_a_busybox_host_without_ip_gets_its_addresses_and_macs_from_ifconfig(tmp_path: Path) -> None:
    """busybox built without its `ip` applet but with `ifconfig` (some NAS and switch
    firmware): the addresses and MACs come from `ifconfig -a`, the same ones iproute2 gives."""
    frame = _one_frame_without_ip(tmp_path, "busybox")
    sample = LinuxAdapter(runner=None).parse_frame(frame)
    assert not [m for m in sample.missing if "addresses" in m], sample.missing
    assert frame["ip_addr"].strip() == "" and frame["ip_addr_text"].strip() == "" and "ifconfig" in frame
    ip_j = {
        link["ifname"]: link
        for link in json.loads(subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, check=True).stdout)
    }
    assert "127.0.0.1/8" in sample.interfaces["lo"].addresses and sample.interfaces["lo"].mtu == 65536
    for name, iface in sample.interfaces.items():
        # ifconfig shows one IPv4 address per label: each it shows is one iproute2 has
        assert set(iface.addresses) <= {f"{a['local']}/{a['prefixlen']}" for a in ip_j[name]["addr_info"]}, name
        if ip_j[name]["link_type"] == "ether":
            assert iface.mac == ip_j[name]["address"], name
    assert [n for n, i in sample.interfaces.items() if i.mac], "no link with a MAC on this host"


def test_a_busybox_host_without_ip_or_ifconfig_says_its_addresses_are_unknown(tmp_path: Path) -> None:
    """Neither `ip` nor `ifconfig` (a busybox built with neither): nothing prints the
    addresses, and the host says so instead of showing none."""
    frame = _one_frame_without_ip(tmp_path, None)
    sample = LinuxAdapter(runner=None).parse_frame(frame)
    assert sample.interfaces["lo"].addresses == () and sample.interfaces["lo"].mtu == 65536
    assert (
        "addresses and MAC unavailable: none of `ip -j addr`, `ip addr` or `ifconfig -a` printed anything;"
        " MTU from sysfs" in sample.missing
    ), sample.missing


@pytest.mark.parametrize(("shell", "awk"), PAIRS, ids=["-".join(p).replace(" ", "_") for p in PAIRS])
def test_the_linux_flows_loop_runs_under_each_shell_and_awk(tmp_path: Path, shell: str, awk: str) -> None:
    """scripts/flows_linux.sh with its awk (flows_linux.awk, flows_rank.awk) over a fake `ss`
    that prints a real `ss -tinH state established` capture each round: two rounds, its flow
    in each, with its read from the round before on the second."""
    if not all(shutil.which(x.split()[0]) for x in (shell, awk)):
        pytest.skip(f"{shell} or {awk} is not installed")
    bin_dir = _awk_dir(tmp_path, awk)
    capture = tmp_path / "ss.txt"
    capture.write_text(fixture("ss/ss-tinH-state-established__linkdeck-lab-tbf-100mbit-cubic.txt"))
    (bin_dir / "ss").write_text(f"#!/bin/sh\ncat '{capture}'\n")
    (bin_dir / "ss").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SSH_CONNECTION="")
    reader, rounds = RoundReader("linux"), []
    # the loop waits on `sleep`, not on its stdin: it is ended here once two rounds are in
    proc = subprocess.Popen([*shell.split(), "-c", linux_script(0.2, 2)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            done = reader.feed(line.rstrip("\n"))
            if done is not None:
                rounds.append(done)
            if len(rounds) == 2:
                break
    finally:
        proc.kill()
        proc.communicate()
    first, second = rounds
    assert (first.total, second.total) == (1, 1) and not first.errors and not second.errors
    ((flow, none),) = first.flows
    ((again, prev),) = second.flows
    assert none is None and prev is not None and prev.key == again.key == flow.key
    assert (flow.local, flow.remote) == ("10.77.20.11:54786", "10.77.20.12:43245")
    assert second.prev_time == first.time < second.time


def _replayed_samples(
    tmp_path: Path, shell: str, awk: str, adapter: StreamingAdapter, replay: str, frames: int
) -> tuple[list[str], list[dict[str, str]], list[HostSample]]:
    """The adapter's real sampler run here under ``shell`` and ``awk`` for ``frames`` frames,
    with tests/replay/REPLAY first on PATH (the host's commands answering with real captures)
    and HOME in tmp_path (where the replays count their calls): the lines it printed, the
    frames as the adapter receives them, and its samples."""
    if not all(shutil.which(x.split()[0]) for x in (shell, awk)):
        pytest.skip(f"{shell} or {awk} is not installed")
    bin_dir = _awk_dir(tmp_path, awk, ("awk", "nawk"))
    env = dict(os.environ, PATH=f"{REPLAY / replay}:{bin_dir}:{os.environ['PATH']}", HOME=str(tmp_path))
    env.pop("LD_REPLAY_STATE", None)
    lines: list[str] = []
    with ticking([*shell.split(), "-c", adapter.script()], 0.05, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= frames:
                break
    got = split_frames(lines)
    samples = [adapter.sample_of(f, float(i)) for i, f in enumerate(got)]
    errors = [s for s in samples if isinstance(s, SampleError)]
    assert not errors, errors
    return lines, got, [s for s in samples if isinstance(s, HostSample)]


# What tests/replay/bsd/netstat adds per call: to vtnet0's link row (bytes in, out, packets
# in, out), and to `netstat -s -p tcp` (packets sent, data packets retransmitted).
BSD_STEP = {"rx_bytes": 1_250_000, "tx_bytes": 625_000, "rx_packets": 1000, "tx_packets": 500}
BSD_TCP_STEP = {"out_segs": 2000, "retrans_segs": 20}


@pytest.mark.parametrize(("shell", "awk"), PAIRS, ids=["-".join(p).replace(" ", "_") for p in PAIRS])
def test_the_bsd_sampler_runs_under_each_shell_and_awk(tmp_path: Path, shell: str, awk: str) -> None:
    """scripts/bsd_sampler.sh with the delta filter over the replayed FreeBSD 14 host: three
    frames (the facts again on the third, facts_every=2), the capture's interfaces with their
    facts, and each tick vtnet0's counters and the TCP counters one replay step further: one
    `netstat -i` and one `netstat -s` per tick."""
    adapter = BsdAdapter(runner=None, os_name="freebsd", facts_every=2)
    lines, frames, samples = _replayed_samples(tmp_path, shell, awk, adapter, "bsd", 3)
    assert [sorted(f) for f in frames] == [
        ["ifconfig", "netstat", "route", "route6", "tcp", "time"],
        ["netstat", "tcp", "time"],
        ["ifconfig", "netstat", "route", "route6", "tcp", "time"],
    ]
    assert any(line.startswith("@@LD SAME ") for line in lines)  # the delta filter ran
    for sample in samples:
        assert set(sample.interfaces) == {"vtnet0", "lo0"}
        vtnet0, lo0 = sample.interfaces["vtnet0"], sample.interfaces["lo0"]
        assert (vtnet0.mtu, vtnet0.mac, vtnet0.addresses[0]) == (1500, "fa:16:3e:ba:3e:25", "140.211.10.91/26")
        assert vtnet0.default_route and not lo0.default_route  # route -n get default: vtnet0
        assert (lo0.kind, lo0.mtu) == ("loopback", 16384)
        assert sample.counters["lo0"].rx_bytes == 0 and sample.tcp is not None
    for prev, cur in zip(samples, samples[1:]):
        assert cur.time > prev.time  # the host's clock (date +%s.%N)
        moved = {k: getattr(cur.counters["vtnet0"], k) - getattr(prev.counters["vtnet0"], k) for k in BSD_STEP}
        assert moved == BSD_STEP
        assert cur.tcp is not None and prev.tcp is not None
        assert {k: getattr(cur.tcp, k) - getattr(prev.tcp, k) for k in BSD_TCP_STEP} == BSD_TCP_STEP


# What tests/replay/illumos/kstat adds to each link's counters per call (bytes in, out), as
# snaptime moves by 1 s; packets move by the bytes over 1000.
ILLUMOS_STEP = {
    "i40e0": (3_125_000, 1_250_000),
    "i40e1": (3_125_000, 1_250_000),
    "i40e2": (3_125_000, 1_250_000),
    "i40e3": (3_125_000, 1_250_000),
    "aggr0": (12_500_000, 5_000_000),
    "admin0": (2_500_000, 625_000),
    "admin1": (1_250_000, 125_000),
}


@pytest.mark.parametrize(("shell", "awk"), PAIRS, ids=["-".join(p).replace(" ", "_") for p in PAIRS])
def test_the_illumos_sampler_runs_under_each_shell_and_awk(tmp_path: Path, shell: str, awk: str) -> None:
    """scripts/illumos_sampler.sh with the delta filter (its `nawk` the awk under test) over the
    replayed seed 003 SmartOS host: three frames, its aggr, ports and VNICs with their facts
    from dladm, ipadm and netstat, and each tick kstat's snaptime 1 s on and every link's
    counters one replay step further."""
    adapter = IllumosAdapter(runner=None, os_name="smartos", facts_every=2)
    lines, frames, samples = _replayed_samples(tmp_path, shell, awk, adapter, "illumos", 3)
    facts = ["addr", "aggr", "kstat", "link", "linkprop", "mac", "phys", "route", "route6", "vnic"]
    assert [sorted(f) for f in frames] == [facts, ["kstat"], facts]
    assert any(line.startswith("@@LD SAME ") for line in lines)  # the delta filter ran
    for sample in samples:
        ifaces = sample.interfaces
        assert set(ifaces) == set(ILLUMOS_STEP)
        assert {i.mtu for i in ifaces.values()} == {1500}
        assert (ifaces["aggr0"].kind, ifaces["aggr0"].members) == ("bond", ("i40e0", "i40e1", "i40e2", "i40e3"))
        assert ifaces["aggr0"].addresses == ("172.30.115.32/24",)
        assert [n for n, i in ifaces.items() if i.default_route] == ["aggr0"]
        assert [(ifaces[v].kind, ifaces[v].over) for v in ("admin0", "admin1")] == [("vnic", "aggr0")] * 2
        assert (ifaces["i40e3"].speed_mbps, ifaces["i40e3"].duplex) == (10000, "full")
    for prev, cur in zip(samples, samples[1:]):
        assert cur.time - prev.time == pytest.approx(1.0)
        for name, (rx, tx) in ILLUMOS_STEP.items():
            a, b = prev.counters[name], cur.counters[name]
            moved = (b.rx_bytes - a.rx_bytes, b.tx_bytes - a.tx_bytes, b.rx_packets - a.rx_packets)
            assert moved == (rx, tx, rx // 1000), name


@pytest.mark.parametrize(("shell", "awk"), PAIRS, ids=["-".join(p).replace(" ", "_") for p in PAIRS])
def test_the_illumos_flows_loop_runs_under_each_shell_and_awk(tmp_path: Path, shell: str, awk: str) -> None:
    """scripts/flows_illumos.sh with its awk (flows_illumos.awk, flows_rank.awk) over a fake
    `connstat` that prints three blocks of a -P capture (constructed from the man page's
    examples) and ends: two rounds (the third block's end never comes), the top two of three
    flows in the second, each with its read from the round before."""
    if not all(shutil.which(x.split()[0]) for x in (shell, awk)):
        pytest.skip(f"{shell} or {awk} is not installed")
    bin_dir = _awk_dir(tmp_path, awk)
    capture = FIXTURES / "illumos/connstat-P-e-T-u-o-flows__constructed-from-man-examples.txt"
    (bin_dir / "connstat").write_text(
        "#!/bin/sh\n"
        f'[ "$*" = "-P -e -T u -o {",".join(connstat.FIELDS)} -i 1" ] || '
        '{ echo "connstat called as: $*" >&2; exit 1; }\n'
        f"tail -n +5 '{capture}'\n"
    )
    (bin_dir / "connstat").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SSH_CONNECTION="")
    done = subprocess.run(
        [*shell.split(), "-c", illumos_script(1.0, 2)], capture_output=True, text=True, env=env, timeout=30
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    reader = RoundReader("omnios")
    rounds = [r for r in map(reader.feed, done.stdout.splitlines()) if r is not None]
    first, second = rounds
    assert (first.prev_time, first.time, first.total) == (None, 1467903880.0, 3) and not first.errors
    assert (second.prev_time, second.time, second.total) == (1467903880.0, 1467903881.0, 3) and not second.errors
    assert sorted(flow.remote for flow, _ in second.flows) == ["10.43.16.132:50001", "172.16.100.162:2049"]
    assert all(prev is not None and prev.key == flow.key for flow, prev in second.flows)
