"""The OpenSSH transport's master connections: where linkdeck's control sockets live, asking
a master whether it runs, ending the ones linkdeck started (on close, and at exit).

Whether a master runs, and its pid, is asked over its control socket in this process, in
OpenSSH's multiplexing protocol (openssh_mux.py: MUX_C_ALIVE_CHECK, answered by MUX_S_ALIVE
with the master's pid), as ``ssh -O check`` asks it: one ssh process less per host at
connect. A socket that answers anything else (another protocol version, an error, a closed
connection mid-exchange) is left to ``ssh -O check``. Asking removes nothing; only before
starting a master at the user's ControlPath is a stale socket there unlinked, as ssh itself
does (make_way). A master linkdeck started is ended the same way (MUX_C_TERMINATE, what
``ssh -O exit`` sends), with ``ssh -O exit`` left for one that answers otherwise.

linkdeck's sockets go in a private directory (0700) of this process under the user's runtime
dir (platformdirs), or a private temp dir where there is none or its path is too long: a
socket path must fit sun_path (104 bytes on the BSDs and macOS, 108 on Linux) with the 17
characters ssh appends while it creates one.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import warnings
from typing import Sequence

import psutil

from .local_runner import run_process
from .openssh_mux import MuxUnexpected, alive_check, terminate
from .runner import TransportError

SUN_PATH = 104
SSH_TEMP_SUFFIX = 17  # ssh binds "PATH.XXXXXXXXXXXXXXXX" first, then renames it
# A master with no session left lives this long: a linkdeck killed before it could end its
# masters leaves none behind for long (a live one always has its sampler's session open).
PERSIST_S = 300
CHECK_TIMEOUT_S = 5.0
# A master answers an alive check from its event loop at once; one that accepts and says
# nothing for this long (stopped, wedged) is not one linkdeck can use.
MUX_TIMEOUT_S = 2.0
_PID = re.compile(r"Master running \(pid=(\d+)\)")

_lock = threading.Lock()
_dir: str | None = None
_counter = itertools.count(1)
_started: dict[str, str] = {}  # control path → the ssh client, for masters linkdeck started and has not ended


def env() -> dict[str, str]:
    """ssh's environment: never an askpass window (BatchMode covers the terminal; sessions also
    run without one)."""
    return {**os.environ, "SSH_ASKPASS_REQUIRE": "never"}


def _fits(path: str) -> bool:
    return len(os.fsencode(path)) + SSH_TEMP_SUFFIX < SUN_PATH


def control_dir() -> str:
    """This process's private directory for control sockets (made on first use)."""
    global _dir
    with _lock:
        if _dir is None:
            _dir = _make_dir()
            atexit.unregister(end_all)  # once, however many dirs a process makes
            atexit.register(end_all)
        return _dir


def _make_dir() -> str:
    try:
        import platformdirs

        with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: its fallback is a shared /tmp dir, not ours
            warnings.simplefilter("error")
            runtime = platformdirs.user_runtime_dir("linkdeck", ensure_exists=False)
        parent = os.path.dirname(runtime)
        if os.path.isdir(parent):
            os.makedirs(runtime, mode=0o700, exist_ok=True)
            made = tempfile.mkdtemp(prefix="", dir=runtime)
            if _fits(os.path.join(made, "m00000")):
                return made
            os.rmdir(made)
    except (OSError, Warning):
        pass  # no runtime dir of ours (a container, another user's): a temp dir does
    return tempfile.mkdtemp(prefix="ld-", dir="/tmp" if os.path.isdir("/tmp") else None)


def socket_path() -> str:
    """A new socket path for one master."""
    path = os.path.join(control_dir(), f"m{next(_counter)}")
    if not _fits(path):
        raise TransportError(
            f"no control socket path short enough for ssh under {control_dir()} (sun_path is {SUN_PATH} bytes)"
        )
    return path


def control_argv(client: str, path: str, operation: str) -> list[str]:
    """``ssh -O operation`` for the master at ``path``: no config read (-F none), so nothing in
    it runs for a check; the host name is only a label."""
    return [client, "-F", "none", "-S", path, "-O", operation, "--", "linkdeck-master"]


async def running(client: str, path: str, timeout: float | None = None) -> int | None:
    """The pid of the master answering at ``path``, or None. Asked over the socket in this
    process; ``ssh -O check`` only when the socket answers something else than a master's
    hello and alive reply. A socket that accepts and says nothing for ``timeout`` s (default
    MUX_TIMEOUT_S) is no master."""
    try:
        return await asyncio.wait_for(alive_check(path), MUX_TIMEOUT_S if timeout is None else timeout)
    except (OSError, asyncio.TimeoutError):
        return None  # no socket, nobody listening (a stale file), not ours to open, or silent
    except MuxUnexpected:
        return await running_by_ssh(client, path)


async def running_by_ssh(client: str, path: str) -> int | None:
    """``ssh -O check``'s answer: the pid it reports, or None."""
    try:
        done = await run_process(control_argv(client, path, "check"), CHECK_TIMEOUT_S, env=env(), new_session=True)
    except (TransportError, OSError):
        return None
    found = _PID.search(done.stderr)
    return int(found[1]) if done.status == 0 and found else None


def make_way(path: str) -> str | None:
    """Clear ``path`` for a new master as ssh does with ControlMaster auto (mux.c: a refused
    connect there is a stale socket, unlinked): a socket file nobody listens on is removed.
    Anything else there is left alone and said (None when the path is free): a master started
    over it would log in without a control socket and stay where ``ssh -O exit`` cannot reach."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if not stat.S_ISSOCK(mode):
        return "it is not a socket"  # connect() to a regular file is refused too: not ours to remove
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(MUX_TIMEOUT_S)
    try:
        sock.connect(path)
    except ConnectionRefusedError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return None
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"connecting to it fails ({e.strerror or e})"
    finally:
        sock.close()
    return "something listens there"


def end_detached(argv: Sequence[str], since: float) -> list[int]:
    """End what ``argv`` (an ``ssh -fN``) left running when its master never answered: ssh
    forked away, so it is no child of ours, and without a control socket ``ssh -O exit`` cannot
    reach it. Only a process of this user, started since ``since`` (time.time()), whose command
    line is exactly ``argv`` (a master retitles itself; this one, with no socket, does not)."""
    ended = []
    wanted = list(argv)
    for proc in psutil.process_iter(["cmdline", "uids", "create_time"]):
        info = proc.info
        if info["cmdline"] != wanted or info["uids"] is None or info["uids"].real != os.getuid():
            continue
        if info["create_time"] is None or info["create_time"] < since - 1.0:  # create_time is coarse
            continue
        with contextlib.suppress(psutil.Error):
            proc.terminate()
            ended.append(proc.pid)
    return ended


def started(client: str, path: str) -> None:
    with _lock:
        _started[path] = client


async def end(path: str) -> None:
    """End a master linkdeck started; one it found open is never passed here."""
    with _lock:
        client = _started.pop(path, None)
    if client is None or await _ended(path):
        return
    with contextlib.suppress(TransportError, OSError):
        await run_process(control_argv(client, path, "exit"), CHECK_TIMEOUT_S, env=env(), new_session=True)


async def _ended(path: str) -> bool:
    """Whether the master at ``path`` is ended or gone, asked over its socket; False leaves it
    to ``ssh -O exit``, which knows whatever else the socket may speak."""
    try:
        await asyncio.wait_for(terminate(path), MUX_TIMEOUT_S)
    except (FileNotFoundError, ConnectionRefusedError):
        return True  # nothing listens: the master is gone already
    except (OSError, MuxUnexpected, asyncio.TimeoutError):
        return False
    return True


def end_all() -> None:
    """At exit: every master linkdeck started and did not end yet, then its socket dir."""
    with _lock:
        left = dict(_started)
        _started.clear()
    if left:
        try:
            ended = asyncio.run(_ended_all(list(left)))
        except RuntimeError:  # an event loop runs in this thread: ssh ends them all
            ended = set()
        for path, client in left.items():
            if path in ended:
                continue
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(
                    control_argv(client, path, "exit"),
                    env=env(),
                    capture_output=True,
                    timeout=CHECK_TIMEOUT_S,
                    start_new_session=True,
                )
    global _dir
    with _lock:
        gone, _dir = _dir, None  # a later master (a test run after this) makes a new one
    if gone is not None:
        shutil.rmtree(gone, ignore_errors=True)


async def _ended_all(paths: list[str]) -> set[str]:
    answers = await asyncio.gather(*(_ended(p) for p in paths))
    return {p for p, ended in zip(paths, answers) if ended}


async def end_all_async() -> None:
    """end_all for a running event loop (tests, a command that ends its run itself)."""
    with _lock:
        paths = list(_started)
    await asyncio.gather(*(end(p) for p in paths))


__all__ = [
    "PERSIST_S",
    "control_argv",
    "control_dir",
    "end",
    "end_all",
    "end_detached",
    "env",
    "make_way",
    "running",
    "running_by_ssh",
    "socket_path",
    "started",
]
