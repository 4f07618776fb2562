"""Linux hosts' TCP counters (issue 19 §1): /proc/net/snmp and /proc/net/netstat of several
kernel eras, the remote sampler's compact tick line (run for real, under dash and bash), and
the local adapter's read."""

from __future__ import annotations

import shutil

import pytest

from linkdeck.core.tcpstats import TCP_COUNTERS, TcpCounters
from linkdeck.parsers import proc_net_snmp
from linkdeck.parsers.parse_error import ParseError
from linkdeck.platforms.adapter import frame_bytes, split_frames
from linkdeck.platforms.linux import LinuxAdapter, build_script
from linkdeck.platforms.psutil_adapter import read_tcp
from tests.corpus import FIXTURES, fixture
from tests.ticks import ticking

TCP = FIXTURES / "linux" / "tcp"
SAMPLER = FIXTURES / "linux" / "linkdeck-sampler__tcp-counters-netns.txt"
NETSTATS = sorted(p.name for p in TCP.glob("proc-net-netstat__*"))


def test_snmp_gives_the_tcp_mib():
    c = proc_net_snmp.parse(fixture("linux/tcp/proc-net-snmp__sysstat-tests-root1.txt"))
    assert (c.in_segs, c.out_segs, c.retrans_segs, c.in_errs, c.in_csum_errs) == (148044, 145504, 304, 35, 0)
    assert c.timeouts is None and c.rcv_pruned is None  # those live in /proc/net/netstat


def test_netstat_under_ten_percent_loss_counts_timeouts_and_lost_retransmits():
    c = proc_net_snmp.parse(fixture("linux/tcp/proc-net-netstat__cockroach-runtime-test-10pct-loss.txt"))
    assert (c.timeouts, c.lost_retrans, c.listen_drops, c.rcv_pruned, c.rcvq_drops) == (870, 194, 2, 0, 0)
    assert c.out_segs is None


def test_a_counter_the_kernel_predates_stays_unknown():
    # TCPRcvQDrop came with 4.19, TCPOFODrop with 3.x backports: a 2013 kernel has neither
    old = proc_net_snmp.parse(fixture("linux/tcp/proc-net-netstat__dansysadm-blog-graphite-2013.txt"))
    assert old.rcvq_drops is None and old.ofo_drops is None and old.timeouts == 92
    new = proc_net_snmp.parse(fixture("linux/tcp/proc-net-netstat__redpanda-host-metrics-test-kernel-6.x.txt"))
    assert new.rcvq_drops == 0 and (new.timeouts, new.lost_retrans) == (58359, 35411)


def test_both_files_together_and_merged():
    snmp = fixture("linux/tcp/proc-net-snmp__procfs-fixture-pid26231.txt")
    netstat = fixture("linux/tcp/proc-net-netstat__procfs-fixture-pid26231-original.txt")
    both = proc_net_snmp.parse(snmp + netstat)
    assert both == proc_net_snmp.parse(snmp).merged(proc_net_snmp.parse(netstat))
    assert (both.out_segs, both.retrans_segs, both.in_errs, both.timeouts) == (594855, 348, 98, 32)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Tcp: InSegs OutSegs\n",
        "Tcp: InSegs OutSegs\nTcp: 1\n",
        "Tcp: InSegs\nUdp: 5\n",
        "Tcp: InSegs\nTcp: -5\n",
        "Ip: A\nIp: 1\n",
    ],
)
def test_what_is_not_a_pair_of_tcp_lines_is_a_parse_error(text):
    with pytest.raises(ParseError):
        proc_net_snmp.parse(text)


def _run_sampler(script: str, shell: str, frames: int = 2) -> list[dict[str, str]]:
    lines: list[str] = []
    argv = ["busybox", "sh", "-c", script] if shell == "busybox" else [shell, "-c", script]  # busybox's sh is an applet
    with ticking(argv, 0.3, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= frames:
                break
    return split_frames(lines)


SHELLS = [s for s in ("dash", "bash", "busybox") if shutil.which(s)]


@pytest.mark.parametrize("shell", SHELLS)
def test_the_sampler_picks_the_counters_the_files_hold_in_every_shell(shell):
    before = read_tcp()
    frames = _run_sampler(build_script(10), shell)
    after = read_tcp()
    adapter = LinuxAdapter(runner=None)
    samples = [adapter.parse_frame(f) for f in frames]
    assert before is not None and after is not None
    for s in samples:
        assert s.tcp is not None
        for name in TCP_COUNTERS:
            # the counters only rise: what the sampler read lies between the two direct reads
            assert getattr(before, name) <= getattr(s.tcp, name) <= getattr(after, name), name
    assert "tcp_names" in frames[0]  # the names come with the slow facts


def test_the_tcp_line_costs_under_150_bytes_a_tick():
    frames = split_frames([ln for ln in SAMPLER.read_text().splitlines() if not ln.startswith("# ")])
    tick = frames[1]
    (line,) = [ln for ln in tick["tick"].splitlines() if ln.startswith("tcp:")]
    assert len(line) + 1 < 150
    # even with every counter at 20 digits (2**64) it stays a few hundred bytes, never KBs
    assert len("tcp:" + " 18446744073709551615" * len(TCP_COUNTERS)) < 300
    without = dict(tick, tick="".join(ln + "\n" for ln in tick["tick"].splitlines() if not ln.startswith("tcp:")))
    assert frame_bytes(tick) - frame_bytes(without) == len(line) + 1


def test_recorded_sampler_frames_carry_the_tcp_counters():
    frames = split_frames([ln for ln in SAMPLER.read_text().splitlines() if not ln.startswith("# ")])
    adapter = LinuxAdapter(runner=None)
    first, second = (adapter.parse_frame(f) for f in frames)
    assert first.tcp == TcpCounters(
        out_segs=408,
        retrans_segs=0,
        in_segs=407,
        timeouts=0,
        lost_retrans=0,
        rcv_pruned=0,
        rcvq_drops=0,
        backlog_drops=0,
        ofo_drops=0,
        listen_drops=0,
        in_errs=0,
        in_csum_errs=0,
    )
    assert second.tcp == first.tcp  # the names came with the first frame's slow facts


def test_a_garbled_tcp_line_leaves_tcp_unknown_and_keeps_the_frame():
    frames = split_frames([ln for ln in SAMPLER.read_text().splitlines() if not ln.startswith("# ")])
    adapter = LinuxAdapter(runner=None)
    adapter.parse_frame(frames[0])
    for bad in ("tcp: 1 2 3", "tcp: " + "x " * 12, "tcp: " + "-1 " * 12, "tcp:"):
        tick = "".join((bad if ln.startswith("tcp:") else ln) + "\n" for ln in frames[1]["tick"].splitlines())
        sample = adapter.parse_frame(dict(frames[1], tick=tick))
        assert sample.tcp is None and sample.counters["lo"].rx_bytes == 15918403


def test_no_names_yet_means_unknown_not_a_guess():
    frames = split_frames([ln for ln in SAMPLER.read_text().splitlines() if not ln.startswith("# ")])
    assert LinuxAdapter(runner=None).parse_frame(frames[1]).tcp is None  # a stream joined mid-way


@pytest.mark.parametrize("netstat", NETSTATS)
def test_the_sampler_reads_older_and_newer_kernels_files_like_the_parser(tmp_path, netstat):
    """The sampler's header walk and shifts, on each kernel era's files (copied to a
    directory the script is pointed at): the same numbers as the parser."""
    snmp = fixture("linux/tcp/proc-net-snmp__sysstat-tests-root1.txt")
    net = fixture(f"linux/tcp/{netstat}")
    # ending in a newline, as the kernel's files always do (mawk -W interactive, 1.3.4
    # 20200120, misreads the file getline opens after one whose last line has none)
    (tmp_path / "snmp").write_text(snmp.rstrip("\n") + "\n")
    (tmp_path / "netstat").write_text(net.rstrip("\n") + "\n")
    script = (
        build_script(10)
        .replace("/proc/net/snmp", f"{tmp_path}/snmp")
        .replace("/proc/net/netstat", f"{tmp_path}/netstat")
    )
    frames = _run_sampler(script, "sh", frames=1)
    # the script's tick line names the renamed files' lines; the adapter reads it the same
    adapter = LinuxAdapter(runner=None)
    sample = adapter.parse_frame(frames[0])
    assert sample.tcp == proc_net_snmp.parse(snmp).merged(proc_net_snmp.parse(net))


def test_a_counter_wider_than_64_bits_is_garbled_output_not_a_value():
    # Found by the property test: 2**64 + 1 went through as listen_drops.
    text = "TcpExt: ListenDrops\nTcpExt: 18446744073709551617\n"
    with pytest.raises(ParseError, match="64-bit"):
        proc_net_snmp.parse(text)
    assert proc_net_snmp.parse("TcpExt: ListenDrops\nTcpExt: 18446744073709551615\n").listen_drops == 2**64 - 1


def test_a_tick_line_read_in_one_check_equals_reading_each_value():
    """sampler_line checks a tick's line of digits in one go; every line (random, constructed:
    plain values, the widest a 64-bit counter holds and one past it, signs, letters, other
    whitespace, names it ignores or repeats) gives what reading value by value gives, or the
    same error."""
    import random

    rng = random.Random(19)
    names = list(proc_net_snmp.SAMPLER_NAMES)
    for _ in range(2000):
        row = names if rng.random() < 0.8 else rng.sample(names + ["Unknown", "InSegs"], len(names))
        values = [
            rng.choice(
                (
                    str(rng.randrange(10**6)),
                    "0",
                    str(2**64 - 1),
                    str(2**64),
                    "0" * 21,
                    "-1",
                    "x1",
                    "1.5",
                    "٣",
                    str(rng.randrange(10**19, 10**20)),
                )
                if rng.random() < 0.2
                else (str(rng.randrange(10**7)),)
            )
            for _ in row
        ]
        line = rng.choice((" ", "\t", "  ", "\x1c")).join([""] + values)
        try:
            fast = proc_net_snmp.sampler_line(row, line)
        except ParseError as exc:
            fast = str(exc)
        try:
            plain = proc_net_snmp.counters(zip(row, line.split()), "linkdeck linux sampler")
        except ParseError as exc:
            plain = str(exc)
        assert fast == plain, line
