"""One lab host: a network namespace with an ``eth0`` leg on the lab bridge and its own sshd."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from . import netns
from .sshd import sshd_command
from .wait import wait_until

if TYPE_CHECKING:
    from .lab import Lab


@dataclass(eq=False)
class LabHost:
    name: str
    netns: str
    address: str
    prefix: int
    mtu: int
    port: int
    dir: Path  # this host's files: host key, sshd_config, sshd.log, home/
    lab: "Lab" = field(repr=False)
    ifname: str = "eth0"
    sshd_pid: int | None = None
    iperf3: bool = True
    replay_bin: Path | None = None
    _sshd: subprocess.Popen | None = field(default=None, repr=False)
    _procs: list[subprocess.Popen] = field(default_factory=list, repr=False)
    _added: list[str] = field(default_factory=list, repr=False)  # interfaces tests added
    _configured_mtu: int = 0

    def __post_init__(self) -> None:
        self._configured_mtu = self.mtu

    # -- processes ---------------------------------------------------------------------------

    def exec(
        self, *argv: str, check: bool = True, timeout: float = 30, input: str | None = None
    ) -> subprocess.CompletedProcess:
        """Run ``argv`` in this namespace (text mode, output captured). It runs with the test
        process's environment, not the PATH of SSH logins (no replay dir here)."""
        return netns.run(["ip", "netns", "exec", self.netns, *argv], check=check, timeout=timeout, input=input)

    def popen(self, *argv: str, **kw) -> subprocess.Popen:
        """A background process in this namespace; killed at teardown if still running."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.netns, *argv], **kw)
        self._procs.append(proc)
        return proc

    def pgrep(self, pattern: str) -> list[int]:
        """Pids of processes in THIS namespace whose command line matches ``pattern``."""
        mine = set(netns.ns_pids(self.netns))
        out = netns.run(["pgrep", "-f", pattern], check=False).stdout
        return sorted(int(p) for p in out.split() if int(p) in mine)

    # -- sshd ----------------------------------------------------------------------------------

    @property
    def sshd_log_path(self) -> Path:
        return self.dir / "sshd.log"

    def start_sshd(self, timeout: float = 10) -> None:
        """Start sshd (same host key, same config) and wait until it listens."""
        if self._sshd is not None and self._sshd.poll() is None:
            return
        argv = [
            "ip",
            "netns",
            "exec",
            self.netns,
            *sshd_command(self.dir / "home", self.dir / "sshd_config", self.sshd_log_path),
        ]
        self._sshd = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.sshd_pid = self._sshd.pid

        def up() -> bool:
            if self._sshd.poll() is not None:
                err = self._sshd.stderr.read() if self._sshd.stderr else ""
                log = self.sshd_log_path.read_text() if self.sshd_log_path.exists() else ""
                self.sshd_pid = None
                raise RuntimeError(f"sshd on {self.name} exited {self._sshd.returncode}: {err}{log}")
            return netns.listening(self._sshd.pid, self.port)

        wait_until(up, timeout, message=f"sshd on {self.name} listening on port {self.port}")

    def stop_sshd(self, kill_sessions: bool = True, timeout: float = 10) -> None:
        """Kill sshd by PID and wait until the port is closed. With ``kill_sessions`` (the
        default) the per-connection sshd processes and their commands die too, as when a host
        goes away; without it they live on, as after ``systemctl restart ssh``."""
        if self._kill_sshd(kill_sessions):
            wait_until(self._port_closed, timeout, message=f"sshd port {self.port} on {self.name} closed")

    def _kill_sshd(self, kill_sessions: bool) -> bool:
        """Kill sshd (and its sessions); True when one was running."""
        proc, self._sshd, self.sshd_pid = self._sshd, None, None
        if proc is None:
            return False
        running = proc.poll() is None
        if running:
            children = []
            if kill_sessions:
                with contextlib.suppress(psutil.NoSuchProcess):
                    children = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
            netns.kill_pids([proc.pid, *children])
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.stderr:
            proc.stderr.close()
        return running

    def _port_closed(self) -> bool:
        with socket.socket() as s:
            s.settimeout(1)
            try:
                s.connect((self.address, self.port))
            except OSError:  # refused — or unreachable (a test took eth0 down): closed either way
                return True
            return False

    # -- interfaces -------------------------------------------------------------------------

    def ip(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return netns.ip(*args, ns=self.netns, check=check)

    def set_mtu(self, ifname: str, mtu: int) -> None:
        self.ip("link", "set", "dev", ifname, "mtu", str(mtu))
        if ifname == self.ifname:
            self.mtu = mtu

    def add_interface(
        self,
        name: str,
        address: str | int | None = None,
        mtu: int | None = None,
        on_bridge: bool = False,
        kind: str = "ifb",
    ) -> str:
        """Add interface ``name`` here, up. ``on_bridge=True`` makes it a veth leg on the lab
        bridge (a second NIC in the lab subnet; ``address`` None picks the next free lab
        address); otherwise a standalone link of ``kind`` (``ip link add … type KIND``; ifb by
        default because this kernel has no dummy driver).
        ``address`` is "a.b.c.d/p", an int host number in the lab subnet, or None."""
        if on_bridge:
            self.lab._bridge_leg(self.netns, name)
            if address is None:
                address = self.lab._next_address()
        else:
            self.ip("link", "add", name, "type", kind)
        if mtu:
            self.ip("link", "set", "dev", name, "mtu", str(mtu))
        if address is not None:
            self.ip("addr", "add", self.lab._cidr(address), "dev", name)
        self.ip("link", "set", "dev", name, "up")
        self._added.append(name)
        return name

    def add_veth_pair(
        self,
        name: str,
        peer: "LabHost | None" = None,
        peer_name: str | None = None,
        address: str | None = None,
        peer_address: str | None = None,
        mtu: int | None = None,
        peer_mtu: int | None = None,
    ) -> tuple[str, str]:
        """A veth cable from ``name`` here to ``peer_name`` on ``peer`` (default: here too),
        both up, with the given addresses ("a.b.c.d/p") and MTUs. Returns both names."""
        peer = peer or self
        peer_name = peer_name or f"{name}p"
        self.ip("link", "add", name, "type", "veth", "peer", "name", peer_name, "netns", peer.netns)
        for host, ifname, addr, m in ((self, name, address, mtu), (peer, peer_name, peer_address, peer_mtu)):
            if m:
                host.ip("link", "set", "dev", ifname, "mtu", str(m))
            if addr:
                host.ip("addr", "add", addr, "dev", ifname)
            host.ip("link", "set", "dev", ifname, "up")
        self._added.append(name)
        if peer is not self:
            peer._added.append(peer_name)
        return name, peer_name

    def del_interface(self, name: str) -> None:
        self.ip("link", "del", name)
        if name in self._added:
            self._added.remove(name)

    def heal(self) -> None:
        """Undo what a test may have left: processes it started with popen() still running,
        sshd stopped, eth0 shaped or re-MTU'd, interfaces added. Cheap when there is nothing
        to undo."""
        self._stop_popened()
        self.start_sshd()
        self.unshape(self.ifname)
        if self.mtu != self._configured_mtu:
            self.set_mtu(self.ifname, self._configured_mtu)
        for name in list(self._added):
            self._added.remove(name)
            self.ip("link", "del", name, check=False)  # a veth whose peer went first is gone

    def shape(self, ifname: str, rate_mbit: int) -> None:
        """Egress token-bucket shaping: ``ifname`` sends at most ``rate_mbit`` Mbit/s."""
        # burst must hold at least rate/HZ worth of bytes or tbf cannot reach its rate.
        burst = max(32 * 1024, int(rate_mbit * 1e6 / 8 / 100))
        self.exec(
            "tc",
            "qdisc",
            "replace",
            "dev",
            ifname,
            "root",
            "tbf",
            "rate",
            f"{rate_mbit}mbit",
            "burst",
            str(burst),
            "latency",
            "50ms",
        )

    def unshape(self, ifname: str) -> None:
        self.exec("tc", "qdisc", "del", "dev", ifname, "root", check=False)

    def shape_inbound(self, ifname: str, rate_mbit: int, queue_bytes: int | None = None) -> None:
        """What the lab bridge sends into leg ``ifname`` (an ``on_bridge`` interface) at most
        ``rate_mbit`` Mbit/s: a tbf on the leg's bridge port, which goes with the leg. This
        host's own sends from that leg's address are untouched (they leave by the route's
        interface, often another one: an asymmetric path). ``queue_bytes``: the queue in front
        of the shaper (default 50 ms of it); a small one drops what a sender pushes past it."""
        peer = int(self.exec("cat", f"/sys/class/net/{ifname}/iflink").stdout)
        ns = self.lab.bridge_ns
        port = next(
            line.split(":")[1].strip().split("@")[0]
            for line in netns.ip("-o", "link", "show", ns=ns).stdout.splitlines()
            if int(line.split(":")[0]) == peer
        )
        burst = max(32 * 1024, int(rate_mbit * 1e6 / 8 / 100))
        queue = ["limit", str(queue_bytes)] if queue_bytes else ["latency", "50ms"]
        netns.run(
            [
                "ip",
                "netns",
                "exec",
                ns,
                "tc",
                "qdisc",
                "replace",
                "dev",
                port,
                "root",
                "tbf",
                "rate",
                f"{rate_mbit}mbit",
                "burst",
                str(burst),
                *queue,
            ]
        )

    # -- teardown -------------------------------------------------------------------------------

    def _reap(self) -> None:
        """Kill what this host started (sshd, popen'd processes) and everything else in its
        namespace, by PID."""
        self._kill_sshd(kill_sessions=True)
        self._stop_popened()
        netns.kill_pids(netns.ns_pids(self.netns))

    def _stop_popened(self) -> None:
        procs, self._procs = self._procs, []
        netns.kill_pids([p.pid for p in procs if p.poll() is None])
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(2)
