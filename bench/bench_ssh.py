"""SSH collection cost: linkdeck's streaming sampler against a bare paramiko loop (the floor)
and against one exec_command per poll, on ordinary hosts and on a 602-link node.

Builds its own namespace lab (needs root): ``--hosts`` hosts of 5 links (lo, eth0, a veth
pair, an ifb) and one node of 602 (lo, eth0, 300 Calico-like veth pairs, tests/lab/node.py),
then at 1 Hz runs linkdeck's collector (Fleet, no UI) and, for the same hosts, a bare paramiko
loop (one channel per host running ``while :; do cat /proc/net/dev; sleep 1; done``, read and
thrown away: what any SSH watcher pays at least), with one connection per host and with
``--connections`` of them spread over the hosts (issue 20's "100 hosts"). Per scenario it prints:

- linkdeck's CPU (or the bare loop's) as % of one core (getrusage of this process),
- missed ticks and p99 sample age (the lab shares this kernel's uptime clock),
- remote CPU per sample: all of it (sshd sessions + what they run) and the sampler alone (the
  sh loop, its children and the delta filter), and the sampler's share of a core at 1 Hz,
- bytes per sample on the wire (the lab's root leg, both directions: IP, TCP and SSH
  included) and the frame's own bytes as the sampler printed them,
- RSS growth per host;

then linkdeck's CPU over the bare loop's for the same hosts (at both counts of connections and
on the node), and exec-per-poll over stream; and
last the node's sampler alone in its namespace, by kind of frame (an ordinary tick, a
slow-facts frame, a full frame), with what they make a sample at the defaults, full frames
included (a window of a minute seldom holds one: they come every 5 minutes).

    sudo python3 bench/bench_ssh.py [--duration 60] [--hosts 20] [--connections 100] [--pairs 300] [--smoke]

``--smoke`` (the test suite's): 2 hosts, 4 connections, a node of 10 pairs, 2 s per
scenario, to prove it still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import paramiko
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from linkdeck.core.model import HostState, HostUpdate  # noqa: E402
from linkdeck.fleet.collector import Fleet  # noqa: E402
from linkdeck.platforms import script_text  # noqa: E402
from linkdeck.platforms.adapter import Adapter, SampleError, read_frames  # noqa: E402
from linkdeck.platforms.delta import FULL_EVERY  # noqa: E402
from linkdeck.platforms.frames import FRAME_BEGIN, FRAME_END, SECTION  # noqa: E402
from linkdeck.platforms.linux import OFFLOAD_FULLS, LinuxAdapter, build_script  # noqa: E402
from linkdeck.settings.config import HostSpec, Settings  # noqa: E402
from linkdeck.transport.ssh import open_runner  # noqa: E402
from linkdeck.transport.ssh_config import resolve  # noqa: E402
from tests.lab import Lab  # noqa: E402
from tests.lab.node import make_node  # noqa: E402
from tests.ticks import ticking  # noqa: E402

WARMUP_S = 5.0
SMOKE = {"duration": 2.0, "hosts": 2, "connections": 4, "warmup": 1.0, "pairs": 10}
NODE = "node"
# one tick of the exec-per-poll baseline, as a single command
EXEC_POLL = Path(__file__).with_name("exec_per_poll.sh")


@cache
def exec_script(with_facts: bool) -> str:
    """One tick of the sampler as a single command (exec_per_poll.sh): what exec-per-poll has
    to run."""
    markers = {"FRAME_BEGIN": FRAME_BEGIN, "FRAME_END": FRAME_END, "SECTION": SECTION}
    return script_text.fill(
        script_text.sh_line(EXEC_POLL.read_text(encoding="utf-8")), {**markers, "WITH_FACTS": int(with_facts)}
    )


class ExecPollAdapter(Adapter):
    """The baseline: one exec_command per tick on the same persistent connection."""

    os = "linux"

    def __init__(self, runner, facts_every: int = 10) -> None:
        super().__init__(runner, facts_every=facts_every)
        self.parser = LinuxAdapter(runner, facts_every=facts_every)

    async def samples(self, interval: float):
        tick = 0
        deadline = time.monotonic()
        while True:
            result = await self.runner.run(["sh", "-c", exec_script(tick % self.facts_every == 0)], timeout=10)
            async for frame in read_frames(_aiter(result.stdout.splitlines())):
                try:
                    yield self.parser.parse_frame(frame)
                except Exception as exc:  # noqa: BLE001 - counted, not fatal, in a benchmark
                    yield SampleError(str(exc))
            tick += 1
            deadline += interval
            await asyncio.sleep(max(0.0, deadline - time.monotonic()))


async def _aiter(items):
    for item in items:
        yield item


async def open_exec(spec: HostSpec, settings: Settings, *, small_requests: bool = False) -> Adapter:
    """The exec-per-poll reference's opener; its polls are small commands whatever the path."""
    target = resolve(spec, settings)
    runner = await open_runner(target, spec.name, settings.host_key_policy, settings.interval)
    return ExecPollAdapter(runner, settings.facts_every)


def boottime() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def remote_cpu_s(lab: Lab) -> tuple[float, float]:
    """CPU seconds used so far in every lab host: by every sshd (listener, sessions, exited
    sessions) and what they ran; and by what they ran alone (the sampler: its sh loop, the
    loop's children, the delta filter)."""
    total = sampler = 0.0
    for host in lab.hosts.values():
        if not host.sshd_pid:
            continue
        try:
            root = psutil.Process(host.sshd_pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for p in procs:
            try:
                t = p.cpu_times()
                name = p.name()
            except psutil.NoSuchProcess:
                continue
            used = t.user + t.system + t.children_user + t.children_system
            total += used
            if not name.startswith("sshd"):  # a loop's children are counted once: as reaped
                sampler += used
    return total, sampler


def wire_bytes(ifname: str) -> int:
    c = psutil.net_io_counters(pernic=True, nowrap=False)[ifname]
    return c.bytes_recv + c.bytes_sent


@dataclass
class Result:
    label: str
    hosts: int
    duration: float
    cpu_pct: float = 0.0
    samples: int = 0
    missed: int = 0
    p99_age_ms: float = 0.0
    remote_ms_per_sample: float = 0.0
    sampler_ms_per_sample: float = 0.0
    bytes_per_sample: float = 0.0
    frame_bytes_per_sample: float | None = None
    rss_growth_mb_per_host: float = 0.0
    errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        frame = "" if self.frame_bytes_per_sample is None else f" (frame {self.frame_bytes_per_sample:7.0f})"
        return (
            f"{self.label:<26} hosts={self.hosts:<4} cpu={self.cpu_pct:5.2f}% of a core  "
            f"samples={self.samples:<6} missed={self.missed:<3} p99_age={self.p99_age_ms:6.1f} ms  "
            f"remote={self.remote_ms_per_sample:5.2f} ms cpu/sample (sampler {self.sampler_ms_per_sample:5.2f} ms, "
            f"{self.sampler_ms_per_sample / 10:.3f}% of a core at 1 Hz)  "
            f"wire={self.bytes_per_sample:7.0f} B/sample{frame}  rss_growth={self.rss_growth_mb_per_host:+.3f} MB/host"
        )


class Window:
    """What one scenario costs between start() and stop(): this process's CPU, the lab hosts'
    CPU, the bytes on the lab's root leg, RSS."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def start(self) -> None:
        self.rss0 = psutil.Process().memory_info().rss
        self.ru0 = resource.getrusage(resource.RUSAGE_SELF)
        self.remote0, self.wire0, self.t0 = remote_cpu_s(self.lab), wire_bytes(self.lab.root_leg[0]), time.monotonic()

    def stop(self) -> None:
        self.ru1 = resource.getrusage(resource.RUSAGE_SELF)
        self.remote1, self.wire1, self.t1 = remote_cpu_s(self.lab), wire_bytes(self.lab.root_leg[0]), time.monotonic()
        self.rss1 = psutil.Process().memory_info().rss

    def result(self, label: str, hosts: int, samples: int) -> Result:
        wall = self.t1 - self.t0
        cpu = (self.ru1.ru_utime - self.ru0.ru_utime) + (self.ru1.ru_stime - self.ru0.ru_stime)
        return Result(
            label=label,
            hosts=hosts,
            duration=wall,
            cpu_pct=100 * cpu / wall,
            samples=samples,
            remote_ms_per_sample=1000 * (self.remote1[0] - self.remote0[0]) / max(samples, 1),
            sampler_ms_per_sample=1000 * (self.remote1[1] - self.remote0[1]) / max(samples, 1),
            bytes_per_sample=(self.wire1 - self.wire0) / max(samples, 1),
            rss_growth_mb_per_host=(self.rss1 - self.rss0) / 1e6 / hosts,
        )


async def measure(
    lab: Lab, label: str, specs: list[HostSpec], duration: float, opener=None, warmup: float = WARMUP_S
) -> Result:
    settings = lab.settings(interval=1.0)
    measuring = False
    ages: list[float] = []
    frames: list[int] = []
    times: dict[str, list[float]] = {s.name: [] for s in specs}
    errors: list[str] = []

    def on_update(u: HostUpdate) -> None:
        if u.state == HostState.LIVE and u.time is not None:
            if measuring:
                ages.append(boottime() - u.time)
                times[u.host].append(u.time)
                if u.wire_bytes is not None:
                    frames.append(u.wire_bytes)
        elif u.state not in (HostState.CONNECTING, HostState.LIVE):
            errors.append(f"{u.host}: {u.state.value}: {u.error}")

    kwargs = {"opener": opener} if opener else {}
    fleet = Fleet(specs, settings, on_update, **kwargs)
    fleet.start()
    window = Window(lab)
    try:
        deadline = time.monotonic() + 60
        while any(c.samples_seen == 0 for c in fleet.collectors.values()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{label}: hosts not live after 60 s: {errors[-3:]}")
            await asyncio.sleep(0.2)
        await asyncio.sleep(warmup)
        window.start()
        measuring = True
        await asyncio.sleep(duration)
        measuring = False
        window.stop()
    finally:
        await fleet.stop()
    samples = sum(len(v) for v in times.values())
    missed = 0
    for seq in times.values():
        for a, b in zip(seq, seq[1:]):
            missed += max(0, round(b - a) - 1)
        missed += max(0, int(duration) - 1 - len(seq))  # a host that stopped sampling
    ages.sort()
    result = window.result(label, len(specs), samples)
    result.missed = missed
    result.p99_age_ms = 1000 * ages[int(0.99 * (len(ages) - 1))] if ages else float("nan")
    result.frame_bytes_per_sample = sum(frames) / len(frames) if frames else None
    result.errors = errors
    return result


def frame_cpu_ms(host, facts_every: int, full_every: int, skip: int, frames: int, interval: float) -> float:
    """The sampler alone in ``host``'s namespace (no sshd): its CPU (the sh loop, its
    children, the delta awk) per frame over ``frames`` frames after the first ``skip``."""

    def tree_s(root: psutil.Process) -> float:
        total = 0.0
        for proc in [root, *root.children(recursive=True)]:
            try:
                t = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + t.children_user + t.children_system
        return total

    # ticked every interval on its stdin, as a runner does; the stdin's EOF ends it
    with ticking(
        ["ip", "netns", "exec", host.netns, "sh", "-c", build_script(facts_every, full_every)], interval
    ) as proc:
        root = psutil.Process(proc.pid)
        ends, start = 0, 0.0
        for line in proc.stdout:
            if line.startswith(b"@@LD END"):
                ends += 1
                if ends == skip:
                    start = tree_s(root)
                elif ends == skip + frames:
                    return 1000 * (tree_s(root) - start) / frames
        raise RuntimeError("the sampler ended early")


def node_breakdown(lab: Lab, smoke: bool, facts_every: int = 10) -> None:
    """The node's sampler CPU by kind of frame, each kind alone (interval 0.1 s, so a minute
    covers them): an ordinary tick, a slow-facts frame, a full frame (averaged over
    OFFLOAD_FULLS of them, one with the offloads as at the defaults); and what they make at
    1 Hz with facts_every 10, full frames included (a 15 s window seldom holds one)."""
    host = lab.hosts[NODE]
    n = 3 if smoke else 1
    tick = frame_cpu_ms(host, 10**6, 10**6, 2, 20 // n * 5, 0.1)
    facts = frame_cpu_ms(host, 1, 10**6, 2, 30 // n, 0.1)
    full = frame_cpu_ms(host, 1, 1, 1, OFFLOAD_FULLS, 0.1)
    per_sample = tick + (facts - tick) / facts_every + (full - facts) / (facts_every * FULL_EVERY)
    links = len(host.exec("ls", "/sys/class/net").stdout.split())
    print(
        f"{links}-link node, sampler alone (its namespace, no sshd), CPU per frame: ordinary tick {tick:.2f} ms, "
        f"slow-facts frame {facts:.2f} ms, full frame {full:.2f} ms (offloads in 1 of {OFFLOAD_FULLS}); "
        f"at 1 Hz, facts_every {facts_every}, a full frame every {FULL_EVERY} facts frames: "
        f"{per_sample:.2f} ms a sample = {per_sample / 10:.3f}% of a core",
        flush=True,
    )


BARE_LOOP = "while :; do cat /proc/net/dev; sleep 1; done"


def bare_loop(lab: Lab, names: list[str], duration: float, warmup: float) -> Result:
    """The floor: per name (a host named twice gets two connections) one paramiko connection
    and one channel running BARE_LOOP, each read by a thread that counts the dumps and keeps
    nothing."""
    clients, threads, counts = [], [], [0] * len(names)
    stop = threading.Event()
    measuring = threading.Event()

    def reader(index: int, channel: paramiko.Channel) -> None:
        channel.settimeout(0.5)
        while not stop.is_set():
            try:
                data = channel.recv(1 << 16)
            except TimeoutError:
                continue
            if not data:
                return
            if measuring.is_set():
                counts[index] += data.count(b"Inter-|")  # one per dump: the header's first line

    try:
        for index, name in enumerate(names):
            host = lab.hosts[name]
            client = paramiko.SSHClient()
            client.load_host_keys(str(lab.known_hosts))
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
            client.connect(
                host.address,
                port=host.port,
                username="root",
                key_filename=str(lab.client_key),
                allow_agent=False,
                look_for_keys=False,
            )
            clients.append(client)
            channel = client.get_transport().open_session()
            channel.exec_command(BARE_LOOP)
            thread = threading.Thread(target=reader, args=(index, channel), daemon=True)
            thread.start()
            threads.append(thread)
        time.sleep(warmup)
        window = Window(lab)
        window.start()
        measuring.set()
        time.sleep(duration)
        measuring.clear()
        window.stop()
    finally:
        stop.set()
        for thread in threads:
            thread.join(2)
        for client in clients:
            client.close()
    return window.result("bare paramiko cat loop", len(names), sum(counts))


async def run(lab: Lab, duration: float, connections: int, warmup: float) -> list[Result]:
    names = [n for n in lab.hosts if n != NODE]
    one_each = [lab.spec(n) for n in names]
    per_host = max(1, connections // len(names))
    many = [HostSpec(name=f"{n}-{k}", address=n) for k in range(per_host) for n in names]
    out = []

    def show(result: Result) -> None:
        print(result.line(), flush=True)
        if result.errors:
            print(f"  {len(result.errors)} non-live updates, e.g. {result.errors[:2]}", flush=True)
        out.append(result)

    for label, specs, opener in (
        ("stream", one_each, None),
        ("exec-per-poll", one_each, open_exec),
        ("stream", many, None),
        ("exec-per-poll", many, open_exec),
    ):
        show(await measure(lab, label, specs, duration, opener, warmup))
    show(await asyncio.to_thread(bare_loop, lab, names, duration, warmup))
    show(await asyncio.to_thread(bare_loop, lab, [s.address for s in many], duration, warmup))
    show(await measure(lab, "stream, 602-link node", [lab.spec(NODE)], duration, None, warmup))
    show(await asyncio.to_thread(bare_loop, lab, [NODE], duration, warmup))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured per scenario (default 60)")
    parser.add_argument("--hosts", type=int, default=20, help="lab hosts of 5 links (default 20)")
    parser.add_argument("--connections", type=int, default=100, help="connections in the large scenario (default 100)")
    parser.add_argument("--pairs", type=int, default=300, help="veth pairs in the node (default 300: 602 links)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds at tiny sizes: does it still run")
    args = parser.parse_args()
    warmup = WARMUP_S
    if args.smoke:
        args.duration, args.hosts, args.connections, warmup, args.pairs = (
            SMOKE["duration"],
            SMOKE["hosts"],
            SMOKE["connections"],
            SMOKE["warmup"],
            SMOKE["pairs"],
        )
    if os.geteuid() != 0:
        print("bench_ssh needs root (network namespaces)", file=sys.stderr)
        return 2
    os.environ.pop("SSH_AUTH_SOCK", None)
    started = time.monotonic()
    with Lab({**{f"h{i}": {} for i in range(1, args.hosts + 1)}, NODE: {}}) as lab:
        for name, host in lab.hosts.items():
            if name == NODE:
                make_node(host, args.pairs)
            else:  # lo, eth0 and these three: 5 links
                make_node(host, 1)
                host.add_interface("ifb0")
        print(
            f"lab: {args.hosts} hosts of 5 links and a node of {2 * args.pairs + 2} up in "
            f"{time.monotonic() - started:.1f} s; {args.duration:g} s per scenario, 1 Hz",
            flush=True,
        )
        results = asyncio.run(run(lab, args.duration, args.connections, warmup))
        node_breakdown(lab, args.smoke)
    stream, execs, stream_many, execs_many, bare, bare_many, node, node_bare = results
    for s_, e_ in ((stream, execs), (stream_many, execs_many)):
        print(
            f"exec-per-poll / stream at {s_.hosts} connections: cpu x{e_.cpu_pct / max(s_.cpu_pct, 1e-9):.2f}, "
            f"remote x{e_.remote_ms_per_sample / max(s_.remote_ms_per_sample, 1e-9):.2f}, "
            f"wire x{e_.bytes_per_sample / max(s_.bytes_per_sample, 1e-9):.2f}"
        )
    for label, s_, b_ in (
        (f"{stream.hosts} hosts of 5 links", stream, bare),
        (f"{stream_many.hosts} connections to hosts of 5 links", stream_many, bare_many),
        ("the 602-link node", node, node_bare),
    ):
        print(
            f"linkdeck / bare paramiko cat loop, {label}: client cpu x{s_.cpu_pct / max(b_.cpu_pct, 1e-9):.2f} "
            f"({s_.cpu_pct:.2f}% vs {b_.cpu_pct:.2f}% of a core), "
            f"remote cpu/sample x{s_.remote_ms_per_sample / max(b_.remote_ms_per_sample, 1e-9):.2f}, "
            f"wire x{s_.bytes_per_sample / max(b_.bytes_per_sample, 1e-9):.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
