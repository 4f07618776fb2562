"""SSH collection cost: one streaming sh loop per host vs one exec_command per poll.

Builds its own namespace lab (needs root), then for 20 hosts and for 100 connections (several
per lab host) runs linkdeck's collector (Fleet, no UI) at 1 Hz and prints:

- collector CPU as % of one core (getrusage of this process: event loop + paramiko threads),
- missed ticks (gaps in each host's remote sample clock),
- p99 sample age (the lab hosts share this kernel's uptime clock, so age = now - sample time),
- remote CPU per sample (sshd sessions + the sh loop and its children, in the namespaces),
- bytes per sample on the wire (the lab's root leg, both directions),
- RSS growth per host,

for the streaming sampler and for exec-per-poll, and the ratio of the two.

    sudo python3 bench/bench_ssh.py [--duration 60] [--hosts 20] [--connections 100] [--smoke]

``--smoke`` (the test suite's): 2 hosts, 4 connections, 2 s per scenario, to prove it still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from linkdeck.collector import Fleet  # noqa: E402
from linkdeck.config import HostSpec, Settings  # noqa: E402
from linkdeck.model import HostState, HostUpdate  # noqa: E402
from linkdeck.platforms.base import Adapter, SampleError, read_frames  # noqa: E402
from linkdeck.platforms.linux import FAST_ATTRS, KIND_ATTRS, LinuxAdapter, grep_sysfs  # noqa: E402
from linkdeck.transport.ssh import open_runner  # noqa: E402
from linkdeck.transport.ssh_config import resolve  # noqa: E402
from tests.lab import Lab  # noqa: E402

WARMUP_S = 5.0
SMOKE = {"duration": 2.0, "hosts": 2, "connections": 4, "warmup": 1.0}


def exec_script(with_facts: bool) -> str:
    """One tick of the sampler as a single command: what exec-per-poll has to run."""
    parts = ["P=/sys/class/net; printf '%s\\n%s\\n' '@@LD BEGIN' '@@LD SECTION tick';", grep_sysfs(FAST_ATTRS, "/proc/uptime /proc/net/dev ")]
    if with_facts:
        parts += [f"echo '@@LD SECTION kinds'; {grep_sysfs(KIND_ATTRS)}", "echo '@@LD SECTION ip_addr'; ip -j addr 2>/dev/null; echo;"]
    parts.append("echo '@@LD END'")
    return " ".join(parts)


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


async def open_exec(spec: HostSpec, settings: Settings) -> Adapter:
    target = resolve(spec, settings)
    runner = await open_runner(target, spec.name, settings.host_key_policy, settings.interval)
    return ExecPollAdapter(runner, settings.facts_every)


def boottime() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def remote_cpu_s(lab: Lab) -> float:
    """CPU seconds used so far by every sshd (listener, sessions, exited sessions) and what
    they ran, in all lab hosts."""
    total = 0.0
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
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + t.children_user + t.children_system
    return total


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
    bytes_per_sample: float = 0.0
    rss_growth_mb_per_host: float = 0.0
    errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.label:<22} hosts={self.hosts:<4} cpu={self.cpu_pct:5.2f}% of a core  samples={self.samples:<6} "
            f"missed={self.missed:<3} p99_age={self.p99_age_ms:6.1f} ms  remote={self.remote_ms_per_sample:5.2f} ms cpu/sample  "
            f"wire={self.bytes_per_sample:7.0f} B/sample  rss_growth={self.rss_growth_mb_per_host:+.3f} MB/host"
        )


async def measure(lab: Lab, label: str, specs: list[HostSpec], duration: float, opener=None, warmup: float = WARMUP_S) -> Result:
    settings = lab.settings(interval=1.0)
    measuring = False
    ages: list[float] = []
    times: dict[str, list[float]] = {s.name: [] for s in specs}
    errors: list[str] = []

    def on_update(u: HostUpdate) -> None:
        if u.state == HostState.LIVE and u.time is not None:
            if measuring:
                ages.append(boottime() - u.time)
                times[u.host].append(u.time)
        elif u.state not in (HostState.CONNECTING, HostState.LIVE):
            errors.append(f"{u.host}: {u.state.value}: {u.error}")

    kwargs = {"opener": opener} if opener else {}
    fleet = Fleet(specs, settings, on_update, **kwargs)
    fleet.start()
    try:
        deadline = time.monotonic() + 60
        while any(c.samples_seen == 0 for c in fleet.collectors.values()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{label}: hosts not live after 60 s: {errors[-3:]}")
            await asyncio.sleep(0.2)
        await asyncio.sleep(warmup)
        proc = psutil.Process()
        rss0 = proc.memory_info().rss
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        remote0, wire0, t0 = remote_cpu_s(lab), wire_bytes(lab.root_leg[0]), time.monotonic()
        measuring = True
        await asyncio.sleep(duration)
        measuring = False
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        remote1, wire1, t1 = remote_cpu_s(lab), wire_bytes(lab.root_leg[0]), time.monotonic()
        rss1 = proc.memory_info().rss
    finally:
        await fleet.stop()
    wall = t1 - t0
    samples = sum(len(v) for v in times.values())
    missed = 0
    for seq in times.values():
        for a, b in zip(seq, seq[1:]):
            missed += max(0, round(b - a) - 1)
        missed += max(0, int(duration) - 1 - len(seq))  # a host that stopped sampling
    ages.sort()
    return Result(
        label=label,
        hosts=len(specs),
        duration=wall,
        cpu_pct=100 * ((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)) / wall,
        samples=samples,
        missed=missed,
        p99_age_ms=1000 * ages[int(0.99 * (len(ages) - 1))] if ages else float("nan"),
        remote_ms_per_sample=1000 * (remote1 - remote0) / max(samples, 1),
        bytes_per_sample=(wire1 - wire0) / max(samples, 1),
        rss_growth_mb_per_host=(rss1 - rss0) / 1e6 / len(specs),
        errors=errors,
    )


async def run(lab: Lab, duration: float, connections: int, warmup: float) -> list[Result]:
    names = list(lab.hosts)
    one_each = [lab.spec(n) for n in names]
    per_host = max(1, connections // len(names))
    many = [HostSpec(name=f"{n}-{k}", address=n) for k in range(per_host) for n in names]
    out = []
    for label, specs, opener in (
        ("stream", one_each, None),
        ("exec-per-poll", one_each, open_exec),
        ("stream", many, None),
        ("exec-per-poll", many, open_exec),
    ):
        result = await measure(lab, label, specs, duration, opener, warmup)
        print(result.line(), flush=True)
        if result.errors:
            print(f"  {len(result.errors)} non-live updates, e.g. {result.errors[:2]}", flush=True)
        out.append(result)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured per scenario (default 60)")
    parser.add_argument("--hosts", type=int, default=20, help="lab hosts (default 20)")
    parser.add_argument("--connections", type=int, default=100, help="connections in the large scenario (default 100)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds at tiny sizes: does it still run")
    args = parser.parse_args()
    warmup = WARMUP_S
    if args.smoke:
        args.duration, args.hosts, args.connections, warmup = SMOKE["duration"], SMOKE["hosts"], SMOKE["connections"], SMOKE["warmup"]
    if os.geteuid() != 0:
        print("bench_ssh needs root (network namespaces)", file=sys.stderr)
        return 2
    os.environ.pop("SSH_AUTH_SOCK", None)
    started = time.monotonic()
    with Lab(args.hosts) as lab:
        print(f"lab: {args.hosts} hosts up in {time.monotonic() - started:.1f} s; {args.duration:g} s per scenario, 1 Hz", flush=True)
        results = asyncio.run(run(lab, args.duration, args.connections, warmup))
    for stream, execs in ((results[0], results[1]), (results[2], results[3])):
        print(
            f"exec-per-poll / stream at {stream.hosts} connections: cpu x{execs.cpu_pct / max(stream.cpu_pct, 1e-9):.2f}, "
            f"remote x{execs.remote_ms_per_sample / max(stream.remote_ms_per_sample, 1e-9):.2f}, "
            f"wire x{execs.bytes_per_sample / max(stream.bytes_per_sample, 1e-9):.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
