"""The OpenSSH transport's master connections: where linkdeck's control sockets live, asking
a master whether it runs, ending the ones linkdeck started (on close, and at exit).

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
import subprocess
import tempfile
import threading
import warnings

from .local_runner import run_process
from .runner import TransportError

SUN_PATH = 104
SSH_TEMP_SUFFIX = 17  # ssh binds "PATH.XXXXXXXXXXXXXXXX" first, then renames it
# A master with no session left lives this long: a linkdeck killed before it could end its
# masters leaves none behind for long (a live one always has its sampler's session open).
PERSIST_S = 300
CHECK_TIMEOUT_S = 5.0
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


async def running(client: str, path: str) -> int | None:
    """The pid of the master answering at ``path``, or None."""
    try:
        done = await run_process(control_argv(client, path, "check"), CHECK_TIMEOUT_S, env=env(), new_session=True)
    except (TransportError, OSError):
        return None
    found = _PID.search(done.stderr)
    return int(found[1]) if done.status == 0 and found else None


def started(client: str, path: str) -> None:
    with _lock:
        _started[path] = client


async def end(path: str) -> None:
    """End a master linkdeck started (``ssh -O exit``); one it found open is never passed here."""
    with _lock:
        client = _started.pop(path, None)
    if client is None:
        return
    with contextlib.suppress(TransportError, OSError):
        await run_process(control_argv(client, path, "exit"), CHECK_TIMEOUT_S, env=env(), new_session=True)


def end_all() -> None:
    """At exit: every master linkdeck started and did not end yet, then its socket dir."""
    with _lock:
        left = list(_started.items())
        _started.clear()
    for path, client in left:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                control_argv(client, path, "exit"),
                env=env(),
                capture_output=True,
                timeout=CHECK_TIMEOUT_S,
                start_new_session=True,
            )
    if _dir is not None:
        shutil.rmtree(_dir, ignore_errors=True)


async def end_all_async() -> None:
    """end_all for a running event loop (tests, a command that ends its run itself)."""
    with _lock:
        paths = list(_started)
    await asyncio.gather(*(end(p) for p in paths))


__all__ = ["PERSIST_S", "control_argv", "control_dir", "end", "end_all", "env", "running", "socket_path", "started"]
