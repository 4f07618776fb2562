"""Shared fixtures: the namespace lab (``lab``, ``make_lab``), ``require_root``, ``wait_for``.

``wait_for`` is also importable: ``from tests.lab import wait_for``."""

from __future__ import annotations

import os
import shutil
import signal

import pytest

from tests.lab import Lab, cleanup_stale, wait_for as _wait_for
from tests.lab.iperf3_new import new_iperf3_missing

ROOT_REASON = "needs root for network namespaces"


def _lab_missing() -> str | None:
    if os.geteuid() != 0:
        return ROOT_REASON
    for tool in ("ip", "tc", "unshare", "mount", "pgrep", "ssh", "ssh-keygen", "iperf3", "ping"):
        if shutil.which(tool) is None:
            return f"the namespace lab needs `{tool}` on PATH"
    if not os.access("/usr/sbin/sshd", os.X_OK):
        return "the namespace lab needs /usr/sbin/sshd (apt-get install openssh-server)"
    return None


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.geteuid() == 0:
        cleanup_stale()
    # A run killed with SIGTERM (a `timeout` wrapper, a CI cancel) still runs atexit teardown.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)


def _exit_on_sigterm(signum: int, frame) -> None:
    raise SystemExit(128 + signum)


# A test that builds or needs the namespace lab (root, sshd, iperf3) is marked ``lab`` so that
# ``-m "not lab"`` is the quick run; forgetting the marker is an error, not a slow surprise.
LAB_FIXTURES = frozenset({"lab", "make_lab", "require_root", "require_new_iperf3"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = [
        item.nodeid
        for item in items
        if (LAB_FIXTURES & set(getattr(item, "fixturenames", ())) or item.path.name.endswith("_lab.py"))
        and item.get_closest_marker("lab") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "these tests use the namespace lab but are not marked `lab` (pytestmark = pytest.mark.lab):\n  "
            + "\n  ".join(unmarked)
        )
    # the leftovers check judges what every lab test left behind: it runs last, whatever the
    # files are called (a stable sort keeps the rest in collection order)
    items.sort(key=lambda item: item.get_closest_marker("after_all") is not None)


@pytest.fixture
def require_root() -> None:
    reason = _lab_missing()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def lab():
    """Three clean hosts h1 h2 h3 (MTU 1500, iperf3 present) for the whole session. Tests
    that change a host (stop sshd, set an MTU, shape) put it back or use ``make_lab``."""
    reason = _lab_missing()
    if reason:
        pytest.skip(reason)
    with Lab(3) as built:
        yield built


@pytest.fixture(autouse=True)
def _heal_session_lab(request):
    """After a test that used the shared ``lab``, undo what it left (sshd stopped, shaping,
    MTU, added interfaces), so one failing test cannot break the ones after it."""
    shared = request.getfixturevalue("lab") if "lab" in request.fixturenames else None
    yield
    if isinstance(shared, Lab):  # (a module may define its own fixture called "lab")
        shared.heal()


@pytest.fixture
def make_lab(require_root):
    """Factory: ``with make_lab({"a": {"mtu": 9000}, "b": {}}) as lab:``. Labs not closed by
    the test are closed when it ends, pass or fail."""
    made: list[Lab] = []

    def factory(hosts: dict[str, dict] | int = 3, **kw) -> Lab:
        built = Lab(hosts, **kw)
        made.append(built)
        return built

    yield factory
    for built in made:
        built.close()


@pytest.fixture(scope="session")
def require_new_iperf3() -> None:
    """Skip (with the reason scripts/test.sh left) where the lab cannot run or the built
    iperf3 3.21 is missing."""
    reason = _lab_missing() or new_iperf3_missing()
    if reason:
        pytest.skip(reason)


@pytest.fixture
def wait_for():
    """The async condition poller: ``await wait_for(lambda: cond, timeout=5)``."""
    return _wait_for
