"""The samplers' sh and awk files: filled only with plain values, sent as one line, and run
for real under each pair of shell and awk a small or a large Linux has."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from linkdeck.flows.sampler import RoundReader, linux_script
from linkdeck.platforms import script_text
from linkdeck.platforms.adapter import split_frames
from linkdeck.platforms.linux import LinuxAdapter, build_script
from tests.corpus import fixture
from tests.ticks import ticking

SCRIPTS = Path(script_text.__file__).parent / "scripts"
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


def _awk_dir(tmp_path: Path, awk: str) -> Path:
    """A directory whose `awk` is the one wanted, to put first on the sampler's PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program, *applet = awk.split()
    target = shutil.which(program)
    assert target is not None
    if applet:
        (bin_dir / "awk").write_text(f'#!/bin/sh\nexec {target} awk "$@"\n')
        (bin_dir / "awk").chmod(0o755)
    else:
        (bin_dir / "awk").symlink_to(target)
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
