"""Low-level namespace plumbing: running ``ip``, naming, picking a free subnet, killing what
lives in a namespace, and removing what crashed runs left behind.

Every name this module makes starts with ``ld-<pid>-`` (namespaces) or ``ld<pid>`` (the one
interface that lives in the root namespace), so concurrent runs by other people on the same
machine never collide and stale leftovers can be told apart from live ones by their pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

NS_PREFIX = "ld-"
TMP_PREFIX = "ldlab-"  # temp dirs: ldlab-<pid>-<n>-XXXX
_NS_NAME = re.compile(r"^ld-(\d+)-\d+-")
_LOCK = Path("/tmp/linkdeck-lab.lock")
# 10.77.X.0/24: X is derived from the pid and bumped until no interface or route in the root
# namespace overlaps, under a machine-wide lock, so concurrent runs get distinct subnets.
_SUBNET_BASE = (10, 77)
_seq = itertools.count(1)


class LabError(subprocess.CalledProcessError):
    """A lab command failed; unlike CalledProcessError its message shows stderr."""

    def __str__(self) -> str:
        argv = " ".join(map(str, self.cmd)) if isinstance(self.cmd, (list, tuple)) else self.cmd
        err = (self.stderr or "").strip() or (self.stdout or "").strip()
        return f"`{argv}` exited {self.returncode}: {err}"


def run(
    argv: list[str], check: bool = True, timeout: float = 30, input: str | None = None
) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input)
    if check and proc.returncode != 0:
        raise LabError(proc.returncode, argv, proc.stdout, proc.stderr)
    return proc


def ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return run(["ip", *(["-n", ns] if ns else []), *args], check=check)


def run_id() -> str:
    """``<pid>-<n>``: unique per lab (or scratch namespace set) within this machine."""
    return f"{os.getpid()}-{next(_seq)}"


@contextlib.contextmanager
def scratch_namespaces(*names: str) -> Iterator[list[str]]:
    """Bare namespaces (only ``lo``, up) for tests that wire their own links:
    ``with scratch_namespaces("a", "b") as (a, b):``. Deleted on exit, processes killed."""
    prefix = f"{NS_PREFIX}{run_id()}-"
    made: list[str] = []
    try:
        for name in names:
            ns = prefix + name
            add_namespace(ns)
            made.append(ns)
            ip("link", "set", "lo", "up", ns=ns)
        yield made
    finally:
        for ns in reversed(made):
            delete_namespace(ns)


def ns_pids(ns: str) -> list[int]:
    out = run(["ip", "netns", "pids", ns], check=False).stdout
    return [int(p) for p in out.split()]


def list_namespaces() -> list[str]:
    out = run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def kill_pids(pids: list[int], grace: float = 2.0) -> None:
    """SIGTERM, then SIGKILL whatever is still there after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
                alive.append(pid)
        if not alive:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_exists(p) for p in alive):
            time.sleep(0.02)
        pids = [p for p in alive if _exists(p)]


def _exists(pid: int) -> bool:
    # A zombie child counts as gone: it holds no sockets and reaping is its parent's business.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


# Namespace inodes this run made, to find processes that outlived their namespace's deletion.
_MADE: dict[str, int] = {}


def add_namespace(ns: str) -> None:
    ip("netns", "add", ns)
    with contextlib.suppress(OSError):
        _MADE[ns] = os.stat(f"/run/netns/{ns}").st_ino


def delete_namespace(ns: str) -> None:
    """Kill every process in ``ns`` (by PID), until none is left, then delete it; its
    interfaces go with it. One pass is not enough: an sshd accepting a connection while its
    listener dies forks a session (``sshd: root@notty``) after the list was read, and a
    process keeps a deleted namespace alive for as long as it runs."""
    for _ in range(20):
        pids = ns_pids(ns)
        if not pids:
            break
        kill_pids(pids)
    ip("netns", "delete", ns, check=False)


def leftovers() -> list[str]:
    """Processes still running in a namespace this run made and already deleted."""
    gone = {ino for ns, ino in _MADE.items() if not os.path.exists(f"/run/netns/{ns}")}
    # The kernel reuses a freed namespace's inode number: a live namespace may carry one.
    for live in Path("/run/netns").glob("*"):
        with contextlib.suppress(OSError):
            gone.discard(live.stat().st_ino)
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(proc / "ns" / "net").st_ino in gone and _exists(int(proc.name)):
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                found.append(f"{proc.name}: {cmdline}")
    return found


def cleanup_stale() -> list[str]:
    """Delete lab namespaces (and lab temp dirs) left by runs whose process is gone; returns
    what it removed. A namespace whose creator pid is alive belongs to a running lab (maybe
    someone else's concurrent run) and is left alone."""
    removed = []
    for ns in list_namespaces():
        match = _NS_NAME.match(ns)
        if not match:
            continue
        owner = int(match.group(1))
        if owner == os.getpid() or _exists(owner):
            continue
        delete_namespace(ns)
        removed.append(ns)
    for tmp in Path(tempfile.gettempdir()).glob(f"{TMP_PREFIX}*-*"):
        owner = tmp.name[len(TMP_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not _exists(int(owner)) and tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(str(tmp))
    return removed


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    """Serialises subnet choice + root-leg creation across concurrent test runs."""
    with open(_LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _root_networks() -> list[ipaddress.IPv4Network]:
    nets = []
    for line in run(["ip", "-4", "-o", "addr", "show"], check=False).stdout.splitlines():
        match = re.search(r"\binet (\S+)", line)
        if match:
            nets.append(ipaddress.ip_interface(match.group(1)).network)
    for line in run(["ip", "-4", "route", "show", "table", "all"], check=False).stdout.splitlines():
        dest = line.split()[0] if line.split() else ""
        if dest[:1].isdigit():
            with contextlib.suppress(ValueError):
                nets.append(ipaddress.ip_network(dest if "/" in dest else dest + "/32", strict=False))
    return nets


def pick_subnet(wanted: str | None) -> ipaddress.IPv4Network:
    """A /24 that overlaps nothing in the root namespace. Call under :func:`machine_lock`."""
    used = _root_networks()
    if wanted:
        net = ipaddress.ip_network(wanted)
        clash = [u for u in used if u.overlaps(net) and u.prefixlen > 0]
        if clash:
            raise RuntimeError(f"lab subnet {net} overlaps {clash[0]} in the root namespace; pick another")
        return net
    start = os.getpid() % 250
    for i in range(250):
        net = ipaddress.ip_network(f"{_SUBNET_BASE[0]}.{_SUBNET_BASE[1]}.{(start + i) % 250 + 1}.0/24")
        if not any(u.overlaps(net) and u.prefixlen > 0 for u in used):
            return net
    raise RuntimeError("no free 10.77.X.0/24 subnet left for the lab (stale labs? run cleanup_stale())")


def listening(pid: int, port: int) -> bool:
    """Whether a TCP socket listens on ``port`` in the network namespace of process ``pid``
    (read from its /proc view, so nothing connects to the daemon and nothing is logged)."""
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            return False
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False
