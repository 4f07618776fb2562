"""Every registered parser against hostile input: how many cases ran, what escaped (anything but
ParseError is a bug), and how long the slowest pathological 40 KB line and a 5 MB input took.

    python3 bench/bench_parsers.py [--cases 10000] [--big-mb 5] [--smoke]

``--smoke`` (the test suite's): 5 cases per parser and a 50 KB input, to prove it still runs.

The strategies are the test suite's (tests/unit/parsers/test_parsers_property.py), which runs a few dozen
cases each in CI; this runs them at volume and prints the figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,  # noqa: E402
)

from tests.unit.parsers import test_parsers_property as props  # noqa: E402


def fuzz(entry, cases: int) -> tuple[int, list[str]]:
    ran, escaped = 0, []

    @settings(max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def one(data):
        nonlocal ran
        ran += 1
        kind = data.draw(st.sampled_from(["numbers", "json", "junk", "text", "cut"]))
        if kind == "numbers":
            text = props._replace_numbers(data.draw(st.sampled_from(props.TEXTS)), data)
        elif kind == "json":
            doc = props.json.loads(data.draw(st.sampled_from(props.JSON_TEXTS)))
            for _ in range(data.draw(st.integers(1, 3))):
                doc = props._with_value(
                    doc, data.draw(st.sampled_from(list(props._paths(doc)))), data.draw(props.HOSTILE_JSON)
                )
            text = props.json.dumps(doc)
        elif kind == "junk":
            lines = data.draw(st.sampled_from(props.TEXTS)).splitlines() or [""]
            i = data.draw(st.integers(0, len(lines) - 1))
            words = lines[i].split(" ")
            words[data.draw(st.integers(0, len(words) - 1))] = data.draw(props._JUNK)
            lines[i] = " ".join(words)
            text = "\n".join(lines)
        elif kind == "text":
            text = data.draw(st.text(max_size=400))
        else:
            text = data.draw(st.sampled_from(props.TEXTS))
            text = text[: data.draw(st.integers(0, len(text)))]
        try:
            props.check(entry, text)
        except Exception as exc:  # noqa: BLE001 - the point is to collect them
            escaped.append(f"{type(exc).__name__}: {str(exc)[:100]} <- {text[:80]!r}")

    one()
    return ran, escaped


def slowest(entry, big_bytes: int) -> tuple[float, float]:
    """(seconds for the slowest 40 KB line, seconds for a ``big_bytes`` input of real output)."""
    worst = 0.0
    for line in props.LONG_LINES:
        t0 = time.perf_counter()
        try:
            props.check(entry, line + "\n")
        except Exception:  # noqa: BLE001
            pass
        worst = max(worst, time.perf_counter() - t0)
    big = "".join(props.TEXTS)
    big = (big * (big_bytes // len(big) + 1))[:big_bytes]
    t0 = time.perf_counter()
    try:
        props.check(entry, big)
    except Exception:  # noqa: BLE001
        pass
    return worst, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--big-mb", type=float, default=5.0, help="size of the large real input (MB)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds at tiny sizes: does it still run")
    args = parser.parse_args()
    if args.smoke:
        args.cases, args.big_mb = 5, 0.05
    big_bytes = int(args.big_mb * 1e6)
    print(f"{'parser':50} {'cases':>7} {'escaped':>8} {'40KB line ms':>13} {f'{args.big_mb:g}MB s':>7}")
    total = 0
    for entry in props.ENTRIES:
        ran, escaped = fuzz(entry, args.cases)
        line_s, big_s = slowest(entry, big_bytes)
        total += len(escaped)
        print(f"{props._id(entry):50} {ran:>7} {len(escaped):>8} {line_s * 1000:>13.1f} {big_s:>7.2f}")
        for e in escaped[:3]:
            print("    " + e)
    print(f"escaped exceptions in all: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
