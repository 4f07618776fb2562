"""A replay's "test" events ahead (linkdeck's own traffic, own.py) come from a scan of their own
that decodes only the lines that can be one (recording/tests_ahead.py): at every step, after a
jump and with the clock going back, it finds what decoding every event ahead finds.

The recordings here are CONSTRUCTED event lines (no samples: the scan only reads times and
kinds), in the recorder's compact form and in hand-written forms the reader accepts too."""

from __future__ import annotations

import json

import pytest
import zstandard

from linkdeck.recording import replay as replay_module
from linkdeck.recording.fileformat import MAGIC, read
from linkdeck.recording.replay import OWN_AHEAD_S, Player

T0 = 1_795_400_000.0


def a_test(t: float, src: str = "h1") -> dict:
    result = {"src": src, "dst": "h2", "duration_s": 5}
    return {"t": t, "ev": "test", "outcome": {"result": result, "timings": {"start": 0.0, "verdict": 9.0}}}


def write(path, frames: list[list[bytes]]) -> None:
    """Each frame a zstd frame of its own (a checkpoint's first line starts each after the
    first), the header first."""
    header = json.dumps({MAGIC: 2, "linkdeck": "test", "started": T0, "hosts": []}).encode()
    lines = [[header, *frames[0]], *frames[1:]]
    path.write_bytes(b"".join(zstandard.ZstdCompressor().compress(b"\n".join(f) + b"\n") for f in lines))


def compact(event: dict) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode()


def events(start: float, end: float, every: float, tests: set[int]) -> list[bytes]:
    out = []
    for n, t in enumerate(range(int(start), int(end), int(every))):
        event = (
            a_test(T0 + t, src=f"h{n % 3}") if n in tests else {"t": T0 + t, "ev": "state", "h": "h1", "state": "live"}
        )
        out.append(compact(event))
    return out


def decoded_tests_ahead(player: Player) -> list[dict]:
    """The plain path: every event ahead decoded, up to the horizon."""
    until = player.now + OWN_AHEAD_S
    found = []
    for i in range(player.LOOKAHEAD):
        event = player._peek(i)
        if event is None or float(event["t"]) > until:
            break
        if event.get("ev") == "test":
            found.append(event)
    return found


def assert_same_at_every_step(player: Player) -> int:
    steps = 0
    while not player.done:
        assert player._tests_ahead() == decoded_tests_ahead(player), player.now - T0
        player.step()
        steps += 1
    assert player._tests_ahead() == decoded_tests_ahead(player) == []
    return steps


@pytest.fixture
def recording(tmp_path):
    first = events(0, 1500, 7, {5, 90, 91, 150})
    odd = [
        b'{"ev": "test", "t": %r, "outcome": {"result": {"src": "h9", "dst": "h2"}}}'
        % (T0 + 1510),  # keys in another order, spaced
        b'{"t":%.6e,"ev":"test","outcome":{}}' % (T0 + 1520),  # an exponent
        b'{"t":%r,"ev":"test","outcome":' % (T0 + 1530),  # cut mid-line: no event
        b"not json at all",
        compact({"t": T0 + 1400, "ev": "state", "h": "h1", "state": "live"}),  # the clock went back
        b'{"t":%r,"ev":"t\\u0065st","outcome":{}}' % (T0 + 1540),  # "test" spelled with an escape
    ]
    second = [compact({"t": T0 + 1600, "ev": "checkpoint"}), *events(1600, 4000, 11, {3, 4, 60, 200})]
    path = tmp_path / "constructed.ldrec"
    write(path, [first + odd, second])
    return read(path)


def test_the_scan_finds_what_decoding_every_event_finds_at_every_step(recording) -> None:
    assert len(recording.checkpoints) == 2
    player = Player(recording, diagnose=False)
    assert decoded_tests_ahead(player)  # tests within the first horizon
    assert assert_same_at_every_step(player) > 400


def test_after_a_jump_and_with_a_short_lookahead(recording, monkeypatch) -> None:
    for when in (T0 + 100, T0 + 1450, T0 + 1700, T0 + 3000):
        player = Player.at(recording, when, diagnose=False)
        assert player._tests_ahead() == decoded_tests_ahead(player)
        assert_same_at_every_step(player)
    # the look-ahead bound counts lines; on lines that all decode that is the events' count
    path = recording.path.with_name("whole.ldrec")
    write(path, [events(0, 3000, 5, {1, 2, 3, 50, 51, 300})])
    monkeypatch.setattr(replay_module.Player, "LOOKAHEAD", 3)
    assert assert_same_at_every_step(Player(read(path), diagnose=False)) == 600


def test_own_traffic_is_the_same_through_the_scan(recording) -> None:
    # what the findings see: linkdeck's own traffic through each host at every step
    player, plain = Player(recording, diagnose=False), Player(recording, diagnose=False)
    plain._tests_ahead = lambda: decoded_tests_ahead(plain)  # type: ignore[method-assign]
    seen = []
    while not player.done:
        here = [player.own_traffic(h) for h in ("h0", "h1", "h2", "h9")]
        assert here == [plain.own_traffic(h) for h in ("h0", "h1", "h2", "h9")]
        seen.append(here)
        player.step()
        plain.step()
    assert any(v == float("inf") for row in seen for v in row)  # a test ran somewhere
