"""A path MTU black hole between linkdeck and a host (issue 10.3), over real SSH: linkdeck's
own leg and the host at MTU 9000, the lab bridge's port toward linkdeck at 1400, offload off.
The handshake and login (small packets) get through, the ~1.4 KB sampler request does not."""

from __future__ import annotations

import asyncio

from linkdeck.collector import HostCollector
from linkdeck.diagnose import diagnose
from linkdeck.model import HostState


def test_a_sampler_request_lost_after_login_is_named_a_path_mtu_black_hole(make_lab, wait_for) -> None:
    lab = make_lab({"a": {"mtu": 9000, "offload": False}}, root_mtu=9000, uplink_mtu=1400, root_offload=False)
    updates = []

    async def watch() -> None:
        collector = HostCollector(lab.spec("a"), lab.settings(), updates.append)
        task = asyncio.create_task(collector.run())
        try:
            await wait_for(lambda: any(u.state == HostState.ERROR for u in updates), timeout=40)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(watch())
    last = next(u for u in updates if u.state == HostState.ERROR)
    assert last.error.startswith("connected, but a 1.") and last.error.endswith(
        "KB request got no answer: a path MTU black hole between here and a?"
    )
    assert HostState.LIVE not in [u.state for u in updates] and "unreachable" not in last.error
    found = [f for f in diagnose([last], lab.settings()) if f.code == "PATH_MTU_BLACKHOLE"]
    assert len(found) == 1 and found[0].host == "a" and found[0].interface is None
    assert "a path MTU black hole between here and a?" in found[0].message and "ping -M do" in found[0].hint
