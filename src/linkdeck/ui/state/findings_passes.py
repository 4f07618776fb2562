"""When and where the dashboard judges its findings: at most every FINDINGS_EVERY_S, in the
turn that draws the rows for a small fleet, on a worker thread for a big one."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...core.model import Finding, HostUpdate, MeasuredPath, SubnetMtu
from ...findings import engine as diagnose

if TYPE_CHECKING:
    from .advice import Advice
    from .recording import RecordSwitch

# Findings judge windows of tens of seconds; evaluating them on every tick of every host cost
# as much as drawing at 400 interfaces, and a finding that shows up a second later is no loss.
FINDINGS_EVERY_S = 2.0
# A pass costs ~7 µs an interface: at a few thousand it runs in the turn that draws the rows
# (their badges from the same moment); past that it would hold the loop (80,000: 0.55 s), so
# it runs on a worker thread and its findings show when it ends.
FINDINGS_INLINE_PORTS = 2000


class FindingsPasses:
    """Mixed into LinkdeckApp, which provides what is declared here."""

    if TYPE_CHECKING:
        updates: dict[str, HostUpdate]
        findings: list[Finding]
        advice: Advice
        recording: RecordSwitch
        _diagnoser: diagnose.Diagnoser
        _diagnoser_failed: bool
        _findings_at: float | None
        _judging: diagnose.Diagnoser | None

        def _schedule_rebuild(self) -> None: ...

        def notify(self, message: str, **kwargs) -> None: ...

        def run_worker(self, work: Any, *, exit_on_error: bool, group: str = "default") -> Any: ...

    def _update_findings(self) -> None:
        now = time.monotonic()
        if self._judging is self._diagnoser or (self._findings_at is not None and now - self._findings_at < FINDINGS_EVERY_S):
            return
        self._findings_at = now
        self.advice.tick()
        diagnoser = self._diagnoser
        if sum(len(u.interfaces) for u in self.updates.values()) < FINDINGS_INLINE_PORTS:
            try:
                self._found(diagnoser.findings())
            except Exception as exc:
                self._findings_failed(exc)
            return
        self._judging = diagnoser
        self.run_worker(self._judge_off_loop(diagnoser), group="findings", exit_on_error=False)

    async def _judge_off_loop(self, diagnoser: diagnose.Diagnoser) -> None:
        try:
            found = await diagnose.findings_off_loop(diagnoser)
        except Exception as exc:
            self._findings_failed(exc)
            return
        finally:
            if self._judging is diagnoser:
                self._judging = None
        if diagnoser is self._diagnoser:  # not a pass over what a replay's rewind dropped
            self._found(found)
            self._schedule_rebuild()

    def _found(self, found: list[Finding]) -> None:
        self.findings = found  # newest first
        self.recording.findings(found)

    def _findings_failed(self, exc: Exception) -> None:
        # diagnostics are an extra: the table must keep updating
        if not self._diagnoser_failed:
            self._diagnoser_failed = True
            self.notify(f"Findings unavailable: {exc}", severity="warning", markup=False)

    def raised_at(self, finding: Finding) -> float | None:
        """When ``finding`` was raised, this stretch of it (on the app's clock)."""
        return self._diagnoser.since(finding)

    def learn(self, found: SubnetMtu) -> None:
        """What a subnet's MTU probe found (ui/state/advice.py): the findings are judged again now."""
        self._diagnoser.learn(found)
        self._findings_at = None
        self._schedule_rebuild()

    def measured_path(self, path: MeasuredPath) -> None:
        """What a path MTU probe between two hosts found (every test's, ``u``, ``d``, a
        subnet's: the test session's ``on_path``): the findings are judged again now."""
        self._diagnoser.measured(path)
        self._findings_at = None
        self._schedule_rebuild()
