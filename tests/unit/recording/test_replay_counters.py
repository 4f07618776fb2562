"""A replayed host has no connection behind it: asking it for a one-shot counter read (what a
test does around its transfer) says so with CountersUnavailable, the error every caller of
read_counters handles, instead of failing on the missing runner."""

import pytest

from linkdeck.platforms.adapter import CountersUnavailable
from linkdeck.recording.replay import replay_adapter
from linkdeck.settings.config import Settings


@pytest.mark.parametrize("os_name", ["linux", "freebsd", "illumos"])
async def test_a_replayed_host_says_its_counters_cannot_be_read_now(os_name: str) -> None:
    adapter = replay_adapter(os_name, None, "sh", Settings())
    assert adapter is not None and adapter.runner is None
    with pytest.raises(CountersUnavailable, match="recorded host"):
        await adapter.read_counters(["eth0"])
