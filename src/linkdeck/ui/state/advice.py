"""What the dashboard does so its advice rests on evidence: it says once each config key that
matches nothing, and has a subnet whose hosts' MTUs differ probed (probe/subnet_mtu.py) before
MTU_MISMATCH names a side; the probe's answer goes to the app's Diagnoser."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.model import SubnetMtu
from ...findings import engine as diagnose
from ...probe.subnet_mtu import Plan, SubnetProber
from .rows import clean

if TYPE_CHECKING:
    from ..app import LinkdeckApp


class Advice:
    def __init__(self, app: "LinkdeckApp") -> None:
        self.app = app
        self.warned: set[str] = set()
        self.prober = SubnetProber(app.tests)
        self.probing = True  # a replay touches no host
        self.learnt: list[SubnetMtu] = []

    def tick(self) -> None:
        """Called with every findings pass: cheap unless something is due."""
        app = self.app
        for line in diagnose.unmatched_keys(app.settings, app.updates.values()):
            if line not in self.warned:
                self.warned.add(line)
                app.notify(clean(line), title="config", severity="warning", markup=False, timeout=15)
        if self.probing:
            for plan in self.prober.due(app.updates.values()):
                app.run_worker(self._probe(plan), group="subnet-mtu", exit_on_error=False)

    async def _probe(self, plan: Plan) -> None:
        found = await self.prober.probe(plan)
        self.learnt.append(found)
        self.app.learn(found)
