"""Tests between lab hosts of both iperf3 eras (issue 21 §2): Debian's 3.12 (every stream on
one thread, no --json-stream) and the 3.21 that scripts/test.sh builds from ../shared/vendor
(a thread per stream, --json-stream). Real iperf3 over real SSH, each combination once, short."""

from __future__ import annotations

import pytest

from linkdeck.probe.hosts import run_pairs
from tests.lab.iperf3_new import NEW_IPERF3_DIR, NEW_IPERF3_VERSION

pytestmark = pytest.mark.lab

OLD = "3.12"  # Debian 12's iperf3: the suite's machines and CI run Debian 12
HOSTS = {"old1": {}, "old2": {}, "new1": {"iperf3": "new"}, "new2": {"iperf3": "new"}}


@pytest.fixture(scope="module")
def eras(require_new_iperf3):
    from tests.lab import Lab

    with Lab(HOSTS) as lab:
        yield lab


def test_each_host_runs_its_era(eras) -> None:
    for name, version in (("old1", OLD), ("new1", NEW_IPERF3_VERSION)):
        banner = eras.ssh(name, "iperf3", "--version").stdout
        assert banner.startswith(f"iperf {version}"), banner
    assert eras.ssh("new2", "sh", "-c", "'command -v iperf3'").stdout == f"{NEW_IPERF3_DIR / 'iperf3'}\n"


@pytest.mark.parametrize(
    ("src", "dst", "shown", "single_threaded"),
    [
        ("old1", "old2", OLD, True),
        ("old1", "new1", f"{OLD} / {NEW_IPERF3_VERSION}", True),
        ("new1", "old1", f"{NEW_IPERF3_VERSION} / {OLD}", True),
        ("new1", "new2", NEW_IPERF3_VERSION, False),
    ],
)
async def test_a_test_between_each_combination(eras, src, dst, shown, single_threaded) -> None:
    specs = {n: eras.spec(n) for n in (src, dst)}
    (o,), _ = await run_pairs(specs, eras.settings(), [(src, dst)], 1)
    r = o.result
    assert r.error is None, r.error
    assert r.forward_bps > 1e8 and r.reverse_bps > 1e8  # both ways measured, in one --bidir run
    assert (r.iperf3_version, r.single_threaded) == (shown, single_threaded)
    assert r.cpu_src_pct is not None and r.cpu_dst_pct is not None
    for name in (src, dst):
        assert eras.hosts[name].pgrep("iperf3") == []
