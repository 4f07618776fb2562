"""When and where the dashboard judges its findings: at most every FINDINGS_EVERY_S, in the
turn that draws the rows for a small fleet, on a worker thread for a big one. The app holds
one ``FindingsPasses`` and gives it what it needs; a replay's rewind calls ``reset``."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from ...core.model import Finding, HostUpdate, MeasuredPath, SubnetMtu
from ...findings import engine as diagnose
from ...settings.config import Settings

# Findings judge windows of tens of seconds; evaluating them on every tick of every host cost
# as much as drawing at 400 interfaces, and a finding that shows up a second later is no loss.
FINDINGS_EVERY_S = 2.0
# A pass's cost grows with the interfaces: at a few thousand it runs in the turn that draws the
# rows (their badges from the same moment); past that it would hold the loop for a visible
# stall, so it runs on a worker thread and its findings show when it ends.
FINDINGS_INLINE_PORTS = 2000


class FindingsPasses:
    """The Diagnoser the dashboard feeds, its latest findings (newest first) and when the next
    pass is due."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], float],
        own_traffic: Callable[[str], Any],
        updates: Callable[[], Mapping[str, HostUpdate]],
        before: Callable[[], None],
        found: Callable[[list[Finding]], None],
        judged_later: Callable[[], None],
        notify: Callable[[str], None],
        run_worker: Callable[..., Any],
    ) -> None:
        """``before`` runs as each pass starts (the advice's probes); ``found`` hears every
        pass's findings (the recording); ``judged_later`` asks for a
        redraw when a pass ends off the loop or new evidence came; ``notify`` says, once, that
        findings are unavailable; ``run_worker`` runs a big fleet's pass on a thread."""
        self._settings, self._clock, self._own_traffic = settings, clock, own_traffic
        self._updates, self._before, self._found, self._judged_later = updates, before, found, judged_later
        self._notify, self._run_worker = notify, run_worker
        # the Diagnoser a worker thread is judging now: one pass at a time over each
        self._judging: diagnose.Diagnoser | None = None
        self.reset()

    def reset(self) -> None:
        """As at start: nothing observed, nothing found (a replay's rewind)."""
        self.findings: list[Finding] = []
        self.diagnoser = diagnose.Diagnoser(self._settings, clock=self._clock, own_traffic=self._own_traffic)
        self._at: float | None = None
        self._failed = False

    def observe(self, update: HostUpdate) -> None:
        self.diagnoser.observe(update)

    def now_due(self) -> None:
        """The next ``update`` judges at once, not on the FINDINGS_EVERY_S cadence."""
        self._at = None

    def update(self) -> None:
        """A pass when one is due: inline for a small fleet, else on a worker thread."""
        now = time.monotonic()
        if self._judging is self.diagnoser or (self._at is not None and now - self._at < FINDINGS_EVERY_S):
            return
        self._at = now
        self._before()
        diagnoser = self.diagnoser
        if sum(len(u.interfaces) for u in self._updates().values()) < FINDINGS_INLINE_PORTS:
            try:
                self._keep(diagnoser.findings())
            except Exception as exc:
                self._unavailable(exc)
            return
        self._judging = diagnoser
        self._run_worker(self._judge_off_loop(diagnoser), group="findings", exit_on_error=False)

    async def _judge_off_loop(self, diagnoser: diagnose.Diagnoser) -> None:
        try:
            found = await diagnose.findings_off_loop(diagnoser)
        except Exception as exc:
            self._unavailable(exc)
            return
        finally:
            if self._judging is diagnoser:
                self._judging = None
        if diagnoser is self.diagnoser:  # not a pass over what a replay's rewind dropped
            self._keep(found)
            self._judged_later()

    def _keep(self, found: list[Finding]) -> None:
        self.findings = found  # newest first
        self._found(found)

    def _unavailable(self, exc: Exception) -> None:
        # diagnostics are an extra: the table must keep updating
        if not self._failed:
            self._failed = True
            self._notify(f"Findings unavailable: {exc}")

    def raised_at(self, finding: Finding) -> float | None:
        """When ``finding`` was raised, this stretch of it (on the app's clock)."""
        return self.diagnoser.since(finding)

    def learn(self, found: SubnetMtu) -> None:
        """What a subnet's MTU probe found (ui/state/advice.py): judged again at once."""
        self.diagnoser.learn(found)
        self.now_due()
        self._judged_later()

    def measured(self, path: MeasuredPath) -> None:
        """What a path MTU probe between two hosts found (every test's, ``u``, ``d``, a
        subnet's: the test session's ``on_path``): judged again at once."""
        self.diagnoser.measured(path)
        self.now_due()
        self._judged_later()
