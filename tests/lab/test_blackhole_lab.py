"""A path MTU black hole between linkdeck and a host (issue 10.3), over real SSH: linkdeck's
own leg and the host at MTU 9000, the lab bridge's port toward linkdeck at 1400, offload off.
The handshake and login (small packets) get through, the sampler request (several KB) does not.
The host's own packets toward linkdeck stay under 1400 (a route MTU there), as when only one
direction of a path drops big packets: then the sampler sent in pieces gets through."""

from __future__ import annotations

import asyncio
import re

import pytest

from linkdeck.core.model import HostState
from linkdeck.findings.engine import diagnose
from linkdeck.fleet.collector import HostCollector

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("transport", ["paramiko", "openssh"])
def test_a_sampler_request_lost_after_login_is_named_a_path_mtu_black_hole(make_lab, wait_for, transport) -> None:
    lab = make_lab({"a": {"mtu": 9000, "offload": False}}, root_mtu=9000, uplink_mtu=1400, root_offload=False)
    lab.hosts["a"].ip("route", "add", f"{lab.root_address}/32", "dev", "eth0", "mtu", "lock", "1400", "advmss", "8960")
    # OpenSSH's client offers so many algorithms that its first key-exchange packet is near
    # 1.5 KB: offered fewer, its login travels in small packets, as paramiko's does
    config = lab.tmp / "ssh_config_small_kex"
    config.write_text(
        "Host *\n  KexAlgorithms curve25519-sha256\n  HostKeyAlgorithms ssh-ed25519\n"
        f"  Ciphers aes128-ctr\n  MACs hmac-sha2-256\n\nInclude {lab.ssh_config}\n"
    )
    settings = lab.settings(transport=transport, ssh_config=str(config))
    updates = []

    async def watch() -> None:
        collector = HostCollector(lab.spec("a"), settings, updates.append)
        task = asyncio.create_task(collector.run())
        try:
            await wait_for(lambda: any(u.state == HostState.ERROR for u in updates), timeout=40)
            # then the retry sends the sampler in pieces under 512 bytes, which get through
            await wait_for(lambda: updates[-1].state == HostState.LIVE and updates[-1].interfaces, timeout=30)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(watch())
    failed = next(u for u in updates if u.state == HostState.ERROR)
    # the sampler's size in KB: more than the 1400 bytes the path carries, which is why it was lost
    said = re.fullmatch(
        r"connected, but a (\d+\.\d) KB request got no answer: a path MTU black hole between here and a\?", failed.error
    )
    assert said and float(said[1]) > 1.4, failed.error
    assert "unreachable" not in failed.error and HostState.UNREACHABLE not in [u.state for u in updates]
    found = [f for f in diagnose([failed], settings) if f.code == "PATH_MTU_BLACKHOLE"]
    assert len(found) == 1 and found[0].host == "a" and found[0].interface is None
    assert "a path MTU black hole between here and a?" in found[0].message and "ping -M do" in found[0].hint
    # watched through the pieces, the host is live and the finding stays up
    live = updates[-1]
    assert "eth0" in [v.iface.name for v in live.interfaces] and live.detail.blackhole_request_bytes is not None
    kept = [f for f in diagnose([live], settings) if f.code == "PATH_MTU_BLACKHOLE"]
    assert len(kept) == 1 and "in pieces under 512 bytes" in kept[0].evidence
