"""Hosts that flood or hang, over real sshd: what they may send is bounded and said, and
nothing linkdeck starts on them outlives its session."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.fleet.collector import Fleet
from tests.lab import wait_for

pytestmark = pytest.mark.lab


def shim_dir(tmp_path: Path, name: str, text: str) -> Path:
    """A dir holding one executable ``name`` (first on a lab host's login PATH)."""
    bin_dir = tmp_path / f"bin-{name}"
    bin_dir.mkdir()
    shim = bin_dir / name
    shim.write_text(text)
    shim.chmod(0o755)
    return bin_dir


# An `sh` that runs everything as /bin/sh does, except linkdeck's sampler (the one script
# holding the frame marker): that prints a line with a terminal escape in it, then junk forever.
FLOOD_SH = """#!/bin/bash
case "$*" in
  *'@@LD BEGIN'*) printf '\\033[2Jnot a sampler, just noise %s\\n' "$(printf 'x%.0s' $(seq 200))"; exec yes junk ;;
esac
exec /bin/sh "$@"
"""


@pytest.mark.parametrize("transport", ["paramiko", "openssh"])
async def test_a_host_that_floods_instead_of_sampling_is_cut_off_and_says_so(make_lab, tmp_path: Path, transport: str) -> None:
    with make_lab({"flood": {"replay_bin": str(shim_dir(tmp_path, "sh", FLOOD_SH))}}) as lab:
        updates: list[HostUpdate] = []
        fleet = Fleet([lab.spec("flood")], lab.settings(interval=0.5, transport=transport), updates.append)
        fleet.start()
        started, cpu = time.monotonic(), time.process_time()
        try:
            said = await wait_for(lambda: next((u for u in updates if u.error and "sent 10 MB" in u.error), None), 60, message="the flood named")
            took = time.monotonic() - started
            # and again after the backoff: the host is retried, each attempt cut off alike
            await wait_for(lambda: sum("sent 10 MB" in (u.error or "") for u in updates) >= 3, 60, message="two more attempts cut off")
            spent = time.process_time() - cpu, time.monotonic() - started
        finally:
            await fleet.stop()
    # the bound, the first line with its escape made visible and cut short
    assert said.error.startswith("sent 10 MB that is not linkdeck's sampler output: “\\x1b[2Jnot a sampler, just noise xxx"), said.error
    assert said.error.endswith("…”") and len(said.error) < 200, said.error
    assert said.state is HostState.ERROR and "retry_in_s" in said.detail
    print(
        f"flood over {transport}: named after {took:.1f} s; states {[u.state.value for u in updates[:3]]}: {said.error}; "
        f"three attempts cost {spent[0]:.1f} s CPU in {spent[1]:.1f} s"
    )
