"""Hosts that flood or hang, over real sshd: what they may send is bounded and said, and
nothing linkdeck starts on them outlives its session."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import psutil
import pytest

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.fleet.collector import Fleet
from tests.lab import netns, wait_for

pytestmark = pytest.mark.lab


def shim_dir(tmp_path: Path, name: str, text: str) -> Path:
    """A dir holding one executable ``name`` (first on a lab host's login PATH)."""
    bin_dir = tmp_path / f"bin-{name}"
    bin_dir.mkdir()
    shim = bin_dir / name
    shim.write_text(text)
    shim.chmod(0o755)
    return bin_dir


# An `sh` that runs everything as /bin/sh does, except linkdeck's sampler: that prints a line
# with a terminal escape in it, then junk forever. The sampler is the script holding the frame
# marker, or what the stream that starts with the OS probes is sent once they are done.
FLOOD_SH = """#!/bin/bash
flood() { printf '\\033[2Jnot a sampler, just noise %s\\n' "$(printf 'x%.0s' $(seq 200))"; exec yes junk; }
case "$*" in
  *'@@LD BEGIN'*) flood ;;
  *'@@LD DETECTED'*) printf '@@LD uname_s\\nLinux\\n@@LD DETECTED\\n'; IFS= read -r sent; flood ;;
esac
exec /bin/sh "$@"
"""


@pytest.mark.parametrize("transport", ["paramiko", "openssh"])
async def test_a_host_that_floods_instead_of_sampling_is_cut_off_and_says_so(
    make_lab, tmp_path: Path, transport: str
) -> None:
    with make_lab({"flood": {"replay_bin": str(shim_dir(tmp_path, "sh", FLOOD_SH))}}) as lab:
        updates: list[HostUpdate] = []
        fleet = Fleet([lab.spec("flood")], lab.settings(interval=0.5, transport=transport), updates.append)
        fleet.start()
        started, cpu = time.monotonic(), time.process_time()
        try:
            said = await wait_for(
                lambda: next((u for u in updates if u.error and "sent 10 MB" in u.error), None),
                60,
                message="the flood named",
            )
            took = time.monotonic() - started
            # and again after the backoff: the host is retried, each attempt cut off alike
            await wait_for(
                lambda: sum("sent 10 MB" in (u.error or "") for u in updates) >= 3,
                60,
                message="two more attempts cut off",
            )
            spent = time.process_time() - cpu, time.monotonic() - started
        finally:
            await fleet.stop()
    # the bound, the first line with its escape made visible and cut short
    assert said.error.startswith(
        "sent 10 MB that is not linkdeck's sampler output: “\\x1b[2Jnot a sampler, just noise xxx"
    ), said.error
    assert said.error.endswith("…”") and len(said.error) < 200, said.error
    assert said.state is HostState.ERROR and said.detail.retry_in_s is not None
    print(
        f"flood over {transport}: named after {took:.1f} s; states {[u.state.value for u in updates[:3]]}: "
        f"{said.error}; three attempts cost {spent[0]:.1f} s CPU in {spent[1]:.1f} s"
    )


# An `ip` whose `ip -j addr` (the sampler's slow facts) never answers, as a hung command.
HUNG_IP = """#!/bin/sh
case "$*" in
  '-j addr'*) exec sleep 4242 ;;
esac
exec /usr/sbin/ip "$@"
"""


def left_on(host) -> dict[int, str]:
    """What runs in ``host``'s namespace besides its listening sshd: pid to command line."""
    found = {}
    for pid in netns.ns_pids(host.netns):
        if pid == host.sshd_pid:
            continue
        with contextlib.suppress(psutil.NoSuchProcess):
            found[pid] = " ".join(psutil.Process(pid).cmdline())[:60]
    return found


def hung(host) -> set[int]:
    return {pid for pid, line in left_on(host).items() if line == "sleep 4242"}


@pytest.mark.parametrize("transport", ["paramiko", "openssh"])
async def test_a_hung_command_leaves_nothing_behind_after_replacing_and_stopping(
    make_lab, tmp_path: Path, transport: str
) -> None:
    """Each replaced session used to leave its sh, subshells and the hung command running on
    the host: all of it ends when the session's channel closes."""
    with make_lab({"hung": {"replay_bin": str(shim_dir(tmp_path, "ip", HUNG_IP))}}) as lab:
        host = lab.hosts["hung"]
        updates: list[HostUpdate] = []
        fleet = Fleet([lab.spec("hung")], lab.settings(interval=0.3, transport=transport), updates.append)
        fleet.start()
        try:
            for attempt in range(3):  # the first session and two that replace the one before
                await wait_for(lambda: hung(host), 30, message=f"attempt {attempt}: the hung command runs")
                during = left_on(host)
                if attempt < 2:
                    fleet.restart("hung")
                    await wait_for(
                        lambda: not set(during) & set(left_on(host)),
                        30,
                        message=f"replaced session {attempt} gone ({during})",
                    )
        finally:
            await fleet.stop()
        await wait_for(
            lambda: not left_on(host), 30, message="nothing of linkdeck's left on the host after the fleet stopped"
        )
    print(
        f"hung over {transport}: while sampling {sorted(during.values())}; "
        f"last states {[u.state.value for u in updates][-3:]}"
    )
