"""linkdeck's log file: where its own records and paramiko's go, never the terminal.

Under the dashboard anything written to the terminal lands in the middle of the screen, and a
headless command's output is what scripts read; paramiko logs a host that never sends its
banner as a traceback, which without a handler Python prints on stderr. Records are made
printable on the way out, as remote text can carry terminal escapes.
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

import platformdirs

from .units import printable

LOGGERS = (("linkdeck", logging.INFO), ("paramiko", logging.WARNING))


class _Printable(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return "\n".join(printable(line) for line in super().format(record).splitlines())


def log_path() -> Path:
    return Path(platformdirs.user_log_dir("linkdeck", appauthor=False)) / "linkdeck.log"


def setup() -> Path | None:
    """Send linkdeck's and paramiko's records to the log file; returns its path, or None when
    it cannot be written (the records are then dropped, still not printed)."""
    path = log_path()
    handler: logging.Handler
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(_Printable("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name, level in LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
    return path if isinstance(handler, logging.handlers.RotatingFileHandler) else None
