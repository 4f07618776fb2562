"""SSH transport cost: linkdeck over the OpenSSH transport (the user's ssh client, one master
per host) against linkdeck over paramiko, each against its floor, on the same lab hosts in the
same run.

Builds its own namespace lab (needs root): ``--hosts`` hosts, then at 1 Hz, one scenario at a
time:

- the OpenSSH floor: per host one ``ssh HOST 'while :; do cat /proc/net/dev; sleep 1; done'``
  (the lab's ssh_config), its output read and thrown away: what any watcher built on the ssh
  client pays at least;
- linkdeck's collector (Fleet, no UI) over OpenSSH;
- linkdeck's collector over paramiko;
- the paramiko floor: one paramiko connection per host, one channel running the same loop,
  read by a thread that counts the dumps and keeps nothing.

After each scenario it waits until the hosts run nothing but their sshd, and says what it
found: the floors' loops outlive their sessions (sh carries on after cat's SIGPIPE), so it ends
them; left running, a hundred of them would load the box under the next scenario.

Per scenario it prints the client side's CPU as % of one core: this process (getrusage) plus
every ssh process it started (its time on CPU from /proc/PID/schedstat: clock ticks miss most of
an ssh that wakes briefly once a second), the masters that ``ssh -f`` detaches included (psutil, by the
control socket directory in their title), those that ended in the window counted as reaped
children; missed ticks; the time from start until every host gave its first sample (all
live), with linkdeck's event loop's longest stall until then (what a dashboard would freeze
for while a fleet connects); and memory: this process's RSS growth and the ssh processes' PSS (shared pages split among
them) at the window's end, per host. Then the ratios: linkdeck over OpenSSH / the OpenSSH floor,
linkdeck over paramiko / the paramiko floor, OpenSSH / paramiko, against the issue's goals (CPU <= 1.0x the OpenSSH
floor, all live <= 3 s).

    sudo python3 bench/bench_transport.py [--hosts 100] [--duration 30] [--kex NAME] [--rounds N] [--smoke]

``--kex NAME`` writes ``KexAlgorithms NAME`` into the lab's ssh_config, as a user's own choice
would be: the OpenSSH floor and linkdeck over OpenSSH both log in with it (linkdeck never sets
it itself); the paramiko scenarios negotiate as they do. OpenSSH 9's default key exchange
(sntrup761x25519) costs several times curve25519-sha256's client CPU per login: with a cheap
one, what linkdeck adds at connect shows. ``--rounds N`` runs the OpenSSH floor and linkdeck
over OpenSSH N times each, in turn, and compares them in the round whose ratio is the median:
on a shared box whose speed drifts, one run of each can differ by half for the same work.
``--smoke`` (the test suite's): 2 hosts, 2 s per scenario, 2 rounds, to prove it still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import signal
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable

import paramiko
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from linkdeck.core.model import HostState, HostUpdate  # noqa: E402
from linkdeck.fleet.collector import Fleet  # noqa: E402
from linkdeck.transport import openssh_master  # noqa: E402
from tests.lab import Lab  # noqa: E402

WARMUP_S = 3.0
LIVE_TIMEOUT_S = 120.0
SMOKE = {"duration": 2.0, "hosts": 2, "warmup": 1.0, "rounds": 2}
GOAL_CPU_X = 1.0
GOAL_LIVE_S = 3.0
BARE_LOOP = "while :; do cat /proc/net/dev; sleep 1; done"


def _cpu_s(proc: psutil.Process) -> float | None:
    """The CPU seconds ``proc`` used: its time on CPU in nanoseconds where Linux says it
    (/proc/PID/schedstat), else psutil's. psutil's user and system times are clock ticks,
    charged to the process running when a tick fires: for an ssh that wakes briefly once a
    second they can say a fraction of what it used."""
    try:
        t = proc.cpu_times()
    except psutil.NoSuchProcess:
        return None
    try:
        with open(f"/proc/{proc.pid}/schedstat") as f:
            on_cpu = int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        on_cpu = t.user + t.system
    return on_cpu + t.children_user + t.children_system


def ssh_processes(control_dir: str | None) -> dict[int, psutil.Process]:
    """Every ssh client this process started: its descendants named ssh (the lab's sshd are
    descendants too), and the masters ``ssh -f`` detached (their title holds their control
    socket, under linkdeck's directory)."""
    found = {}
    with contextlib.suppress(psutil.NoSuchProcess):
        for proc in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                if proc.name() == "ssh":
                    found[proc.pid] = proc
    if control_dir:
        for proc in psutil.process_iter(["name", "cmdline"]):
            if proc.info["name"] == "ssh" and control_dir in " ".join(proc.info["cmdline"] or []):
                found[proc.pid] = proc
    return found


class ClientCpu:
    """The client side's CPU and memory between start() and stop(): this process, its reaped
    children, and the ssh processes still running (each counted from start, or from its birth)."""

    def __init__(self, control_dir: str | None = None) -> None:
        self.control_dir = control_dir

    def _sample(self) -> tuple[float, float, dict[int, float], dict[int, int]]:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # reaped: only ssh clients here
        cpu, pss = {}, {}
        for pid, proc in ssh_processes(self.control_dir).items():
            used = _cpu_s(proc)
            if used is None:
                continue
            cpu[pid] = used
            with contextlib.suppress(psutil.NoSuchProcess):
                pss[pid] = proc.memory_full_info().pss  # shared pages split among the clients
        return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, cpu, pss

    def start(self) -> None:
        self.rss0 = psutil.Process().memory_info().rss
        self.own0, self.reaped0, self.cpu0, _ = self._sample()
        self.t0 = time.monotonic()

    def stop(self) -> None:
        self.own1, self.reaped1, self.cpu1, self.ssh_pss = self._sample()
        self.t1 = time.monotonic()
        self.rss1 = psutil.Process().memory_info().rss

    def ssh_cpu_pct(self) -> float:
        running = sum(used - self.cpu0.get(pid, 0.0) for pid, used in self.cpu1.items())
        # one that ended in the window was reaped: RUSAGE_CHILDREN holds its whole life
        ended = sum(used for pid, used in self.cpu0.items() if pid not in self.cpu1)
        return 100 * ((self.reaped1 - self.reaped0) + running - ended) / (self.t1 - self.t0)

    def cpu_pct(self) -> float:
        return 100 * (self.own1 - self.own0) / (self.t1 - self.t0) + self.ssh_cpu_pct()


@dataclass
class Result:
    label: str
    hosts: int
    cpu_pct: float
    ssh_cpu_pct: float
    samples: int
    missed: int
    all_live_s: float | None
    rss_growth_mb_per_host: float
    ssh_pss_mb_per_host: float
    errors: list[str]
    # linkdeck's: the event loop's longest wait past a 10 ms timer's, from start to all live
    # (the dashboard's loop: what it would freeze for while a fleet connects)
    stall_s: float | None = None

    def line(self) -> str:
        live = "n/a" if self.all_live_s is None else f"{self.all_live_s:5.2f} s"
        return (
            f"{self.label:<22} hosts={self.hosts:<4} cpu={self.cpu_pct:6.2f}% of a core "
            f"(ssh {self.ssh_cpu_pct:5.2f}%)  samples={self.samples:<6} missed={self.missed:<4} all live {live}  "
            f"rss_growth={self.rss_growth_mb_per_host:+.3f} MB/host  ssh_pss={self.ssh_pss_mb_per_host:.2f} MB/host"
        )


def missed_ticks(times: dict[str, list[float]], duration: float) -> int:
    missed = 0
    for seq in times.values():
        for a, b in zip(seq, seq[1:]):
            missed += max(0, round(b - a) - 1)
        missed += max(0, int(duration) - 1 - len(seq))  # a host that stopped sampling
    return missed


async def linkdeck(lab: Lab, transport: str, duration: float, warmup: float) -> Result:
    names = list(lab.hosts)
    settings = lab.settings(interval=1.0, transport=transport)
    measuring = False
    times: dict[str, list[float]] = {n: [] for n in names}
    errors: list[str] = []

    def on_update(u: HostUpdate) -> None:
        if u.state == HostState.LIVE and u.time is not None:
            if measuring:
                times[u.host].append(u.time)
        elif u.state not in (HostState.CONNECTING, HostState.LIVE):
            errors.append(f"{u.host}: {u.state.value}: {u.error}")

    control_dir = openssh_master.control_dir() if transport == "openssh" else None
    window = ClientCpu(control_dir)
    fleet = Fleet([lab.spec(n) for n in names], settings, on_update)
    stalls = [0.0]
    beat = asyncio.create_task(heartbeat(stalls))
    started = time.monotonic()
    fleet.start()
    try:
        while any(c.samples_seen == 0 for c in fleet.collectors.values()):
            if time.monotonic() - started > LIVE_TIMEOUT_S:
                raise RuntimeError(f"{transport}: hosts not live after {LIVE_TIMEOUT_S:g} s: {errors[-3:]}")
            await asyncio.sleep(0.05)
        all_live = time.monotonic() - started
        beat.cancel()  # the stalls while connecting only
        await asyncio.sleep(warmup)
        window.start()
        measuring = True
        await asyncio.sleep(duration)
        measuring = False
        window.stop()
    finally:
        beat.cancel()
        await fleet.stop()
    return Result(
        f"linkdeck over {transport}",
        len(names),
        window.cpu_pct(),
        window.ssh_cpu_pct(),
        sum(len(v) for v in times.values()),
        missed_ticks(times, duration),
        all_live,
        (window.rss1 - window.rss0) / 1e6 / len(names),
        sum(window.ssh_pss.values()) / 1e6 / len(names),
        errors,
        max(stalls),
    )


async def heartbeat(stalls: list[float], period: float = 0.01) -> None:
    """Appends how much later than asked each ``period`` timer fired: the event loop's stalls."""
    while True:
        asked = time.monotonic()
        await asyncio.sleep(period)
        stalls.append(time.monotonic() - asked - period)


async def ssh_floor(lab: Lab, duration: float, warmup: float) -> Result:
    """The OpenSSH floor: one ``ssh HOST BARE_LOOP`` per host, its dumps counted."""
    names = list(lab.hosts)
    counts = dict.fromkeys(names, 0)
    first: dict[str, float] = {}
    measuring = False

    async def read(name: str, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while data := await proc.stdout.read(1 << 16):
            first.setdefault(name, time.monotonic())
            if measuring:
                counts[name] += data.count(b"Inter-|")  # one per dump: the header's first line

    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    started = time.monotonic()
    argv = ["ssh", "-F", str(lab.ssh_config), "-T", "-o", "BatchMode=yes"]
    pipes = {
        "stdin": asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.DEVNULL,
    }
    procs = {name: await asyncio.create_subprocess_exec(*argv, name, BARE_LOOP, env=env, **pipes) for name in names}
    readers = [asyncio.create_task(read(n, p)) for n, p in procs.items()]
    window = ClientCpu()
    try:
        while len(first) < len(names):
            if time.monotonic() - started > LIVE_TIMEOUT_S:
                raise RuntimeError(f"ssh floor: {len(names) - len(first)} hosts gave nothing in {LIVE_TIMEOUT_S:g} s")
            await asyncio.sleep(0.05)
        all_live = max(first.values()) - started
        await asyncio.sleep(warmup)
        window.start()
        measuring = True
        await asyncio.sleep(duration)
        measuring = False
        window.stop()
    finally:
        for proc in procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        await asyncio.gather(*(p.wait() for p in procs.values()))
        await asyncio.gather(*readers, return_exceptions=True)
    samples = sum(counts.values())
    return Result(
        "bare ssh cat loop",
        len(names),
        window.cpu_pct(),
        window.ssh_cpu_pct(),
        samples,
        max(0, len(names) * (int(duration) - 1) - samples),
        all_live,
        (window.rss1 - window.rss0) / 1e6 / len(names),
        sum(window.ssh_pss.values()) / 1e6 / len(names),
        [],
    )


def paramiko_floor(lab: Lab, duration: float, warmup: float) -> Result:
    """The paramiko floor: per host one connection and one channel running BARE_LOOP, each
    read by a thread; they connect one after another, so no time to all live."""
    names = list(lab.hosts)
    counts = dict.fromkeys(names, 0)
    stop, measuring = threading.Event(), threading.Event()

    def reader(name: str, channel: paramiko.Channel) -> None:
        channel.settimeout(0.5)
        while not stop.is_set():
            try:
                data = channel.recv(1 << 16)
            except TimeoutError:
                continue
            if not data:
                return
            if measuring.is_set():
                counts[name] += data.count(b"Inter-|")

    clients, threads = [], []
    window = ClientCpu()
    rss0 = psutil.Process().memory_info().rss
    try:
        for name in names:
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
            transport = client.get_transport()
            assert transport is not None
            channel = transport.open_session()
            channel.exec_command(BARE_LOOP)
            threads.append(threading.Thread(target=reader, args=(name, channel), daemon=True))
            threads[-1].start()
        time.sleep(warmup)
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
    samples = sum(counts.values())
    return Result(
        "bare paramiko cat loop",
        len(names),
        window.cpu_pct(),
        window.ssh_cpu_pct(),
        samples,
        max(0, len(names) * (int(duration) - 1) - samples),
        None,
        (window.rss1 - rss0) / 1e6 / len(names),
        0.0,
        [],
    )


def on_hosts(lab: Lab) -> dict[int, str]:
    """Every process on the lab hosts (in their namespaces) but their sshd listeners: pid ->
    command line."""
    namespaces = {os.stat(f"/run/netns/{host.netns}").st_ino for host in lab.hosts.values()}
    listeners = {host.sshd_pid for host in lab.hosts.values()}
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in listeners:
            continue
        with contextlib.suppress(OSError):
            if os.stat(proc / "ns" / "net").st_ino in namespaces:
                found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return found


def settle_hosts(lab: Lab, timeout: float = 10.0) -> tuple[set[int], list[str]]:
    """Wait until a scenario's processes on the hosts are gone, ending the floors' loops: the
    issue's loop outlives its session (sh carries on after cat's SIGPIPE), and a hundred of them
    left running would load the box under the next scenario. Returns the loops ended and what
    else is still there."""
    ended: set[int] = set()
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while (left := on_hosts(lab)) and time.monotonic() < deadline:
        loops = {pid for pid, cmdline in left.items() if BARE_LOOP in cmdline}
        # a loop's own shell, not the copy it forked that instant to start a cat or a sleep
        ended |= {pid for pid in loops if _parent(pid) not in loops}
        for pid in loops:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.05)
    return ended, [f"{pid}: {cmdline.strip()}" for pid, cmdline in left.items() if pid not in killed]


def _parent(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[1])
    return None


def ratio(a: float, b: float) -> str:
    return f"x{a / max(b, 1e-9):.2f}"


@dataclass
class Runs:
    ssh_floors: list[Result]
    over_openssh: list[Result]
    over_paramiko: Result
    paramiko_floor: Result


async def run(lab: Lab, duration: float, warmup: float, rounds: int) -> Runs:
    """The OpenSSH floor and linkdeck over OpenSSH ``rounds`` times each, in turn (the floor
    first in even rounds, second in odd ones: a box whose speed drifts during the run weighs on
    both alike), then linkdeck over paramiko and the paramiko floor once."""
    floors, overs = [], []
    for i in range(rounds):
        order = ("floor", "openssh") if i % 2 == 0 else ("openssh", "floor")
        for which in order:
            if which == "floor":
                floors.append(await reported(lab, ssh_floor(lab, duration, warmup)))
            else:
                overs.append(await reported(lab, linkdeck(lab, "openssh", duration, warmup)))
    over_paramiko = await reported(lab, linkdeck(lab, "paramiko", duration, warmup))
    bare_paramiko = await reported(lab, asyncio.to_thread(paramiko_floor, lab, duration, warmup))
    await openssh_master.end_all_async()
    return Runs(floors, overs, over_paramiko, bare_paramiko)


async def reported(lab: Lab, scenario: Awaitable[Result]) -> Result:
    """``scenario``'s result, printed, once the hosts are back to running nothing but sshd."""
    result = await scenario
    print(result.line(), flush=True)
    if result.stall_s is not None:
        print(f"  event loop's longest stall until all live: {result.stall_s:.3f} s", flush=True)
    if result.errors:
        print(f"  {len(result.errors)} non-live updates, e.g. {result.errors[:2]}", flush=True)
    ended, left = await asyncio.to_thread(settle_hosts, lab)
    print(
        f"  hosts after {result.label}: {len(ended)} loops ended, {len(left)} other processes left"
        + (f", e.g. {left[:2]}" if left else ""),
        flush=True,
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds measured per scenario (default 30)")
    parser.add_argument("--hosts", type=int, default=100, help="lab hosts (default 100)")
    parser.add_argument(
        "--kex", metavar="NAME", help="KexAlgorithms NAME in the lab's ssh_config (OpenSSH scenarios; default: ssh's)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="the OpenSSH floor and linkdeck over OpenSSH this many times each, in turn (default 1)",
    )
    parser.add_argument("--smoke", action="store_true", help="a few seconds at tiny sizes: does it still run")
    args = parser.parse_args()
    warmup = WARMUP_S
    if args.smoke:
        args.duration, args.hosts, warmup, args.rounds = (SMOKE[k] for k in ("duration", "hosts", "warmup", "rounds"))
    if os.geteuid() != 0:
        print("bench_transport needs root (network namespaces)", file=sys.stderr)
        return 2
    os.environ.pop("SSH_AUTH_SOCK", None)
    started = time.monotonic()
    with Lab({f"h{i}": {} for i in range(1, args.hosts + 1)}) as lab:
        if args.kex:  # the user's choice, for every host: after the hosts' own blocks, as a default
            with lab.ssh_config.open("a") as config:
                config.write(f"\nHost *\n  KexAlgorithms {args.kex}\n")
        load = os.getloadavg()[0]
        print(
            f"lab: {args.hosts} hosts up in {time.monotonic() - started:.1f} s; {args.duration:g} s per scenario, "
            f"1 Hz; key exchange: {args.kex or 'ssh default'} (OpenSSH); "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            flush=True,
        )
        if load > (os.cpu_count() or 1) / 2:  # the times to live are the box's as much as linkdeck's
            print(
                f"note: load average {load:.1f} on {os.cpu_count()} CPUs: "
                "a loaded box; times to live are slower than on a quiet one",
                flush=True,
            )
        runs = asyncio.run(run(lab, args.duration, warmup, args.rounds))
    ld_paramiko, paramiko_bare = runs.over_paramiko, runs.paramiko_floor
    # with several rounds, the round whose ratio is the median (the upper one of an even count)
    ratios = sorted(
        (o.cpu_pct / max(f.cpu_pct, 1e-9), f, o) for f, o in zip(runs.ssh_floors, runs.over_openssh, strict=True)
    )
    _, ssh_bare, ld_openssh = ratios[len(ratios) // 2]
    if args.rounds > 1:
        print(
            f"OpenSSH rounds, linkdeck / floor: cpu {' '.join(f'x{r:.2f}' for r, _, _ in ratios)}; all live "
            f"{' '.join(f'{o.all_live_s or 0:.2f}' for o in runs.over_openssh)} s against "
            f"{' '.join(f'{f.all_live_s or 0:.2f}' for f in runs.ssh_floors)} s; the median round below"
        )
    print(
        f"linkdeck over openssh / bare ssh cat loop: cpu {ratio(ld_openssh.cpu_pct, ssh_bare.cpu_pct)} "
        f"({ld_openssh.cpu_pct:.2f}% vs {ssh_bare.cpu_pct:.2f}% of a core; goal x{GOAL_CPU_X:.1f}: "
        f"{'met' if ld_openssh.cpu_pct <= GOAL_CPU_X * ssh_bare.cpu_pct else 'missed'})"
    )
    print(
        f"linkdeck over paramiko / bare paramiko cat loop: cpu {ratio(ld_paramiko.cpu_pct, paramiko_bare.cpu_pct)} "
        f"({ld_paramiko.cpu_pct:.2f}% vs {paramiko_bare.cpu_pct:.2f}% of a core)"
    )
    print(
        f"openssh / paramiko: cpu {ratio(ld_openssh.cpu_pct, ld_paramiko.cpu_pct)}, "
        f"all live {ratio(ld_openssh.all_live_s or 0, ld_paramiko.all_live_s or 0)}; "
        f"memory per host {ld_openssh.rss_growth_mb_per_host + ld_openssh.ssh_pss_mb_per_host:.2f} MB "
        f"(ssh processes {ld_openssh.ssh_pss_mb_per_host:.2f}) vs {ld_paramiko.rss_growth_mb_per_host:.2f} MB"
    )
    openssh_live = statistics.median(o.all_live_s or 0.0 for o in runs.over_openssh)
    for r, live in ((ld_openssh, openssh_live), (ld_paramiko, ld_paramiko.all_live_s or 0.0)):
        of = f", the median of {args.rounds} rounds" if r is ld_openssh and args.rounds > 1 else ""
        print(
            f"{r.label}: all {r.hosts} live in {live:.2f} s{of} (goal {GOAL_LIVE_S:g} s: "
            f"{'met' if live <= GOAL_LIVE_S else 'missed'})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
