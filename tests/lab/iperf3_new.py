"""The lab's newer iperf3 era: iperf3 3.21, built by scripts/test.sh from ../shared/vendor
(Debian's own is 3.12). A lab host with ``{"iperf3": "new"}`` gets its bin directory first
on its SSH logins' PATH; tests that need it skip with the reason the build left."""

from __future__ import annotations

from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / ".lab-tools"
NEW_IPERF3_DIR = TOOLS / "iperf3-3.21" / "bin"  # holds iperf3 and nothing else
NEW_IPERF3_VERSION = "3.21"


def new_iperf3_missing() -> str | None:
    """Why the built iperf3 3.21 is not there (None when it is)."""
    if (NEW_IPERF3_DIR / "iperf3").is_file():
        return None
    why = TOOLS / "iperf3-3.21.why"
    said = why.read_text().strip() if why.is_file() else ""
    return (
        f"iperf3 {NEW_IPERF3_VERSION} is not built ({said or 'run scripts/test.sh once'}); "
        "needs build-essential and ../shared/vendor"
    )
