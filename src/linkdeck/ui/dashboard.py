"""What a screen may read of the dashboard, and what it may ask of it: the one interface between
the app (``LinkdeckApp``, its only implementation) and the screens, the modal helpers and the
recording switch. A screen reads ``dashboard(self)``, never the app's private fields, and
changes nothing of the app's but through these (``tests`` runs its tests and keeps their
verdicts; ``fleet`` restarts a host)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

from textual.dom import DOMNode

if TYPE_CHECKING:
    from ..core.model import Finding, HostUpdate
    from ..fleet.collector import Tap
    from ..probe.session import TestSession
    from ..settings.config import HostSpec, Settings
    from .state.view_state import ViewState


class Recording(Protocol):
    """What a screen uses of the recording switch (r): where saved files go, and the flows it
    showed while a recording runs."""

    directory: Path

    def flows(self, host: str, interface: str | None, lines: Iterable[str]) -> None: ...


class Watcher(Protocol):
    """What the dashboard watches its hosts through: the collectors' ``Fleet``, or in a replay
    the player of the recording that stands where the Fleet stands."""

    def start(self) -> None: ...

    async def stop(self) -> None: ...

    def restart(self, name: str) -> None: ...  # a host's loop again, once what stopped it is fixed

    def record(self, tap: Tap | None) -> None: ...  # tell ``tap`` what every host does (None: stop)


class Dashboard(Protocol):
    settings: Settings
    hosts: list[HostSpec]  # the SSH-watched hosts, in the user's order
    updates: dict[str, HostUpdate]  # every shown host's newest update (Prometheus ones too)

    @property
    def findings(self) -> list[Finding]: ...  # newest first

    tests: TestSession  # connections for tests, each interface's last verdict
    fleet: Watcher | None
    view: ViewState

    @property
    def recording(self) -> Recording: ...  # r; its directory is where saved results go too

    clock: Callable[[], float]  # wall-clock now for freshness (a replay's clock in a replay)

    def spec(self, host: str) -> HostSpec | None: ...

    def raised_at(self, finding: Finding) -> float | None: ...  # when it was raised (the clock's time)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def push_screen(self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False) -> Any: ...

    # exit_on_error has no default: every worker says whether its error ends the app (Textual's default: it does)
    def run_worker(
        self, work: Any, *, exit_on_error: bool, name: str | None = "", group: str = "default", exclusive: bool = False
    ) -> Any: ...

    def call_from_thread(self, callback: Any, *args: Any, **kwargs: Any) -> Any: ...


def dashboard(node: DOMNode) -> Dashboard:
    """The dashboard a screen or widget belongs to."""
    # Textual types node.app as App; it is the LinkdeckApp, which mypy checks against Dashboard
    # where the app hands itself on as one (the recording switch, the advice, the probes)
    return node.app  # type: ignore[return-value]
