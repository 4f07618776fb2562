"""The dashboard's ``r``: record the fleet, the findings and every test to a file named by the
time, in the user data dir, while the header shows ``● REC 00:42 14 kB`` (the path is in the
toasts and on the host screen: a whole path would push the header's counts off an 80-column
terminal)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rich.text import Text

from ...core import units
from ...core.model import SubnetMtu
from ...fleet.collector import Fleet
from ...recording.recorder import Recorder
from ..dashboard import Dashboard


def default_dir(save_dir: str | None = None) -> Path:
    """Where recordings and matrix exports go: ``[ui] save_dir``, else the user data dir."""
    if save_dir:
        return Path(save_dir).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("linkdeck")) / "recordings"


class RecordSwitch:
    """Starts and stops one app's recording; ``findings`` and ``outcome`` feed it while on."""

    def __init__(self, app: Dashboard, directory: Path | None = None) -> None:
        self.app = app
        self.directory = directory or default_dir(app.settings.save_dir)
        self.recorder: Recorder | None = None
        self._started = 0.0
        self._probed: dict[str, SubnetMtu] = {}  # each subnet's last MTU probe, recording or not

    @property
    def on(self) -> bool:
        return self.recorder is not None

    def toggle(self) -> None:
        if self.recorder is None:
            self.start()
        else:
            self.stop()

    def start(self) -> None:
        fleet = self.app.fleet
        if not isinstance(fleet, Fleet):  # none yet, or a replay's player: no live host to record
            return
        path = self.directory / time.strftime("linkdeck-%Y%m%d-%H%M%S.ldrec")
        try:
            self.recorder = Recorder.for_fleet(path, fleet)
        except OSError as exc:
            self.app.notify(
                f"Cannot record to {path}: {exc.strerror or exc}. Check that the directory is writable.",
                severity="error",
                markup=False,
            )
            return
        self._started = time.monotonic()
        fleet.record(self.recorder)
        for found in self._probed.values():  # probed before: the replay needs them from its start
            self.recorder.subnet_mtu(found)
        self.recorder.findings(self.app.findings)
        self.app.notify(f"Recording to {path} (r stops)", markup=False)

    def stop(self) -> None:
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return
        if self.app.fleet is not None:
            self.app.fleet.record(None)
        try:
            recorder.close()
        except OSError as exc:
            self.app.notify(
                f"The recording {recorder.path} may be cut short: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        self.app.notify(
            f"Saved {recorder.path}: {recorder.samples} samples. linkdeck replay or linkdeck report opens it.",
            markup=False,
        )

    def findings(self, findings) -> None:
        if self.recorder is not None:
            self.recorder.findings(findings)

    def outcome(self, outcome, in_matrix: bool) -> None:
        """Every test's outcome (the app's TestSession calls this); kept while recording."""
        if self.recorder is not None:
            self.recorder.test(outcome, matrix=in_matrix)

    def subnet_mtu(self, found: SubnetMtu) -> None:
        """What a subnet's MTU probe found; kept while recording (a replay learns it), and
        written when a recording starts later."""
        self._probed[found.subnet] = found
        if self.recorder is not None:
            self.recorder.subnet_mtu(found)

    def flows(self, host: str, interface: str | None, lines) -> None:
        """A round the flows screen showed (its lines as the host printed them); kept while
        recording."""
        if self.recorder is not None:
            self.recorder.flows(host, interface, lines)

    def own_ended(self, host: str, when: float) -> None:
        """A test's traffic through ``host`` ended (its sockets gone); kept while recording."""
        if self.recorder is not None:
            self.recorder.own_ended(host, when)

    def status(self) -> Text | None:
        if self.recorder is None:
            return None
        words = [elapsed(time.monotonic() - self._started)]
        try:  # what is on disk so far (the compressor holds back a little)
            words.append(units.size_bytes(os.stat(self.recorder.path).st_size))
        except OSError:
            pass  # the file vanished or its disk went away: the close says so
        return Text.assemble(("● REC ", "bold red"), (" ".join(words), "red"), " │ ")

    @property
    def path(self) -> Path | None:
        return Path(self.recorder.path) if self.recorder is not None else None


def elapsed(seconds: float) -> str:
    """``00:42``, ``12:05``, ``1:02:09``: a recording's length as a stopwatch shows it."""
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
