"""Saves the README's picture, docs/screenshot.svg: the dashboard as Textual draws it, on a
constructed fleet of synthetic hosts (tests/synthetic.py: real collector, rates and findings;
made-up interfaces), one NIC at 100 Mb/s half duplex and one MTU that differs from its subnet's.

    .venv/bin/python scripts/screenshot.py [OUT.svg]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from linkdeck.settings.config import HostSpec, Settings  # noqa: E402
from linkdeck.ui.app import LinkdeckApp  # noqa: E402
from tests.synthetic import SyntheticAdapter, opener_for, physical  # noqa: E402


def fleet() -> dict[str, SyntheticAdapter]:
    def addr(last: int) -> tuple[str, ...]:
        return (f"10.0.5.{last}/24",)

    return {
        "nas01": SyntheticAdapter(
            [physical("eth0", 100, duplex="half", addresses=addr(10)), physical("eth1", None, oper="down")],
            rate_bps={"eth0": 61e6, "eth1": 0.0},
        ),
        "backup": SyntheticAdapter(
            [physical("enp3s0", 10000, mtu=9000, addresses=addr(20))], rate_bps={"enp3s0": 58e6}
        ),
        "fw1": SyntheticAdapter(
            [physical("igb0", 1000, addresses=addr(1)), physical("igb1", 1000, addresses=("203.0.113.7/28",))],
            rate_bps={"igb0": 120e6, "igb1": 118e6},
        ),
        "web02": SyntheticAdapter([physical("eth0", 1000, addresses=addr(30))], rate_bps={"eth0": 3.2e6}),
    }


async def main(out: Path) -> None:
    adapters = fleet()
    hosts = [HostSpec(name, address=f"{name}.invalid") for name in adapters]
    app = LinkdeckApp(Settings(interval=0.5, local=False), hosts, opener=opener_for(adapters))
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(200):
            await pilot.pause(0.1)
            if len(app.findings) >= 2:
                break
        await pilot.pause(1.0)
        app.save_screenshot(filename=out.name, path=str(out.parent))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshot.svg"))
