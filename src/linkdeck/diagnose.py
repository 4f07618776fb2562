"""Fleet state → findings (pure). Rules arrive with the diagnostics issue."""

from __future__ import annotations

from typing import Iterable

from .config import Settings
from .model import Finding, HostUpdate


def diagnose(updates: Iterable[HostUpdate], settings: Settings) -> list[Finding]:
    return []
