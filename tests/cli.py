"""Running linkdeck as a user runs it: ``linkdeck(*args)`` is ``python -m linkdeck ARGS`` in a
subprocess, isolated from the user running the tests — no ``$LINKDECK_CONFIG``, and the user
config, data, state and log dirs (XDG) point into a directory of this test run, so a config,
saved column choice or log of whoever runs the suite never changes what a test sees. Pass
``--config`` / ``--ssh-config`` in ``args`` for a test's own files."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from tests.lab.sshd import bin_farm_without

# one empty home for the whole run: writes land here, reads find nothing of the user's
_HOME = Path(tempfile.mkdtemp(prefix="linkdeck-tests-"))
if os.environ.get("LINKDECK_LAB_TRANSPORT"):  # the lab suite over one transport: the user config says it
    (_HOME / "xdg_config_home" / "linkdeck").mkdir(parents=True)
    (_HOME / "xdg_config_home" / "linkdeck" / "config.toml").write_text(
        f'[ssh]\ntransport = "{os.environ["LINKDECK_LAB_TRANSPORT"]}"\n'
    )


def isolated_env(drop: Iterable[str] = (), **extra: str) -> dict[str, str]:
    """The environment a linkdeck subprocess gets: this one minus the user's linkdeck state."""
    env = {k: v for k, v in os.environ.items() if k not in set(drop)}
    env["LINKDECK_CONFIG"] = ""
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(_HOME / var.lower())
    env.update(extra)
    return env


def linkdeck(
    *args: str,
    stdin: str | None = None,
    timeout: float = 60,
    drop_env: Iterable[str] = (),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``linkdeck ARGS`` to completion: stdout, stderr and the exit code, as text. ``stdin`` is
    what it reads (nothing when None); ``drop_env`` names variables it must not see (e.g.
    ``SSH_AUTH_SOCK``, so only the test's own key is offered); ``env`` sets more (``PATH``)."""
    return subprocess.run(
        [sys.executable, "-m", "linkdeck", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        env=isolated_env(drop_env, **(env or {})),
    )


def path_without_ssh(where: Path) -> str:
    """A PATH with every standard program but ssh (Match exec still finds its shell)."""
    return str(bin_farm_without(where, ("ssh",)))
