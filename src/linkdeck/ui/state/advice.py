"""What the dashboard does so its advice rests on evidence: it says once each config key that
matches nothing, and has a subnet whose hosts' MTUs differ probed (probe/subnet_mtu.py) before
MTU_MISMATCH names a side; the probe's answer goes to the app's Diagnoser."""

from __future__ import annotations

import asyncio
import time
from operator import attrgetter
from typing import Any, Protocol

from ...core.model import SubnetMtu
from ...findings import engine as diagnose
from ...probe.subnet_mtu import Plan, SubnetProber
from ...transport.ssh_options import config_knows
from ..dashboard import Dashboard
from .rows import clean

NOTICE_S = 15  # how long the config notice shows on the dashboard
_NAME = attrgetter("iface.name")


class Advised(Dashboard, Protocol):
    """What the advice asks of the dashboard beyond what every screen may."""

    @property
    def screen_stack(self) -> list[Any]: ...

    def learn(self, found: SubnetMtu) -> None: ...

    def withdraw(self, title: str, message: str) -> None: ...


class Advice:
    def __init__(self, app: Advised) -> None:
        self.app = app
        self.warned: set[str] = set()
        self.prober = SubnetProber(app.tests)
        self.probing = True  # a replay touches no host
        self.checking_config = True  # a replay's settings are the recording's: nothing to fix here
        self.learnt: list[SubnetMtu] = []
        self._asked = False
        self._known: set[str] | None = None  # the key hosts the ssh config knows, once it answered
        self._notice: str | None = None  # the config notice last shown
        self._until = 0.0  # when it goes (monotonic)
        self._left: float | None = None  # the time it had when another screen took it off
        # what diagnose.unmatched_keys read last time, and its answer (_unmatched)
        self._unmatched_key: tuple[Any, ...] | None = None
        self._unmatched_lines: list[str] = []
        self.config_checks = 0  # how many times the config keys were checked against the hosts

    def tick(self) -> None:
        """Called with every findings pass: cheap unless something is due."""
        app = self.app
        if self.checking_config:
            self._warn_config()
        if self.probing:
            for plan in self.prober.due(app.updates.values()):
                app.run_worker(self._probe(plan), group="subnet-mtu", exit_on_error=False)

    def _warn_config(self) -> None:
        """One notice naming every config key that is wrong, on the dashboard itself (never
        over a picker or a result, which wait for it), each key once per run."""
        app = self.app
        if not self._asked:
            self._asked = True
            app.run_worker(self._ask_ssh_config(), group="config-keys", exit_on_error=False)
        known = self._known
        if known is None or len(app.screen_stack) > 1:
            return
        lines = [line for line in self._unmatched(known) if line not in self.warned]
        if lines:
            self.warned.update(lines)
            message = "\n".join(clean(line) for line in lines)
            if self._notice is not None and time.monotonic() < self._until:  # one notice, never two
                app.withdraw("config", self._notice)
                message = f"{self._notice}\n{message}"
            self._show(message, NOTICE_S)

    def _unmatched(self, known: set[str]) -> list[str]:
        """``diagnose.unmatched_keys`` of the app's settings and hosts, checked again only when
        something it read changed: the settings, the hosts the ssh config knows, the hosts (in
        order, and whether each has reported interfaces), and the interfaces' names of the
        hosts it asked about (those a key names; none when there is no key)."""
        app = self.app
        updates = list(app.updates.values())
        key = self._unmatched_key
        if (
            key is None
            or key[:3] != (app.settings, known, [(u.host, not u.interfaces) for u in updates])
            or any(tuple(map(_NAME, app.updates[host].interfaces)) != names for host, names in key[3])
        ):
            self.config_checks += 1
            asked: set[str] = set()
            self._unmatched_lines = diagnose.unmatched_keys(app.settings, updates, known.__contains__, asked)
            read = [(host, tuple(map(_NAME, app.updates[host].interfaces))) for host in asked]
            self._unmatched_key = (app.settings, frozenset(known), [(u.host, not u.interfaces) for u in updates], read)
        return self._unmatched_lines

    def _show(self, message: str, timeout: float) -> None:
        self.app.notify(message, title="config", severity="warning", markup=False, timeout=timeout)
        self._notice, self._until, self._left = message, time.monotonic() + timeout, None

    def dashboard_left(self) -> None:
        """Another screen came in front of the dashboard. A toast follows the screen in front,
        so the config notice still showing is taken off: never over a picker or a result."""
        left = self._until - time.monotonic()
        if self._notice is not None and self._left is None and left > 0:
            self._left = left
            self.app.withdraw("config", self._notice)

    def dashboard_back(self) -> None:
        """The dashboard is in front again: a notice taken off shows again for the time it had."""
        if self._notice is not None and self._left is not None:
            self._show(self._notice, max(self._left, 1.0))

    async def _ask_ssh_config(self) -> None:
        """Which hosts named by a [speed] key or a mute rule the ssh config knows: ``ssh -G``
        per name, off the event loop."""
        settings = self.app.settings
        names = {key.partition("/")[0] for key in settings.speed_overrides} | {r.host for r in settings.mute if r.host}
        names -= {"local", *(h.name for h in settings.hosts), *self.app.updates}
        found = await asyncio.to_thread(lambda: {n for n in names if config_knows(n, settings.ssh_config)})
        self._known = found

    async def _probe(self, plan: Plan) -> None:
        found = await self.prober.probe(plan)
        self.learnt.append(found)
        self.app.learn(found)
