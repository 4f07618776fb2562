"""How state kept for every interface of a fleet stays cheap at 10,000 hosts: the one place
the model, the rate step, the findings and the Prometheus source get their memory and
collector machinery from, so that they read as plain domain code.

CPython's cyclic collector walks every object it tracks on each full collection, a block of the
event loop when 10,000 hosts keep 80,000 interfaces' state alive (bench/bench_prometheus.py
prints what it tracks and what one walk costs). It tracks every instance of a
class (a dataclass, a NamedTuple) for life, and stops tracking a plain tuple once it finds the
tuple's items untracked (one level of nesting per collection). So:

- ``keep_as_values``: a frozen dataclass's field kept as a plain tuple of its values and handed
  out as its type, built on each read (a view's rates and totals);
- state kept between passes is flat plain tuples of numbers and strings, read by named places
  (the findings' windows, the static rules' facts, the rate step's readings);
- ``gc_paused``, ``collect_young``, ``collect_full``: the big passes keep the collector out of
  them and say when it runs;
- ``Turns``: their pieces take turns with the dashboard's timers;
- ``pin_malloc_thresholds``: glibc's heap kept from creeping over a long watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import functools
import gc
import threading
from operator import attrgetter
from typing import Any, AsyncIterator, Callable, Iterator, Sequence, TypeVar

T = TypeVar("T")


def keep_as_values(cls: type[T], name: str, kind: type[Any], order: Sequence[str]) -> Callable[[T], tuple[Any, ...]]:
    """Make ``cls``'s field ``name`` keep a ``kind`` as a plain tuple of its values, in
    ``order``, and hand it out as a ``kind`` again, built on each read; return the reader of
    the values as kept, for the passes over the whole fleet that would build a ``kind`` per read.

    ``cls`` is a ``dataclass(frozen=True, slots=True)``: its own __init__, replace, ==, repr and
    asdict read and write the field through the property put in the slot's place, so its API is
    a dataclass's, unchanged; its __init__ takes the values as they are kept too."""
    slot = getattr(cls, name)  # the slot's own descriptor, made by dataclass(slots=True)
    values = attrgetter(*order)

    def read(self: T) -> Any:
        return kind(*slot.__get__(self))

    def keep(self: T, value: Any) -> None:
        slot.__set__(self, value if type(value) is tuple else values(value))

    setattr(cls, name, property(read, keep, doc=f"{name}: a {kind.__name__}, kept as its values"))
    reader: Callable[[T], tuple[Any, ...]] = slot.__get__
    return reader


_pause_lock = threading.Lock()
_pauses = 0  # gc_paused blocks running now, on any thread
_enabled_before = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection during a pass that makes and drops many containers (a
    parsed Prometheus answer: half a million; a findings pass over 80,000 interfaces). Each
    few hundred new containers start a collection, each tenth of those a deeper one, and now
    and then one over everything alive (the dashboard's state included): most of such a pass's
    time, spent finding nothing, since these passes build no reference cycles. Whatever the
    pass frees is freed by reference counting as it goes; the collector runs again after.

    The collector is the process's, and pauses overlap across threads (the findings pass on a
    worker, the source's steps on the event loop): it comes back on when the last one ends."""
    global _pauses, _enabled_before
    with _pause_lock:
        if _pauses == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _enabled_before:
                gc.enable()


def collect_young(step: int) -> None:
    """Collect the young generation now, due or not (and every tenth step, as many as the
    collector's threshold says, the middle one too), at the end of step ``step`` of a pass
    that replaces long-lived objects with new ones (a refresh's updates for a few hundred
    hosts), inside its gc_paused.

    The collector counts allocations less deallocations, so freeing the old views counts
    against making the new ones: the count stays flat and no collection comes while the new
    objects pile up in the young generation, to be walked in one long collection (at 10,000
    Prometheus hosts, a refresh's worth); collected after each step, each walk is one step's.
    Called before the pause ends, it also leaves the count at zero, so the
    collector does not start one of its own, now and then a full one, on top of the step."""
    middle = gc.get_threshold()[1]
    gc.collect(1 if step % middle == middle - 1 else 0)


def collect_full() -> None:
    """A full collection, now: a pass that collects its young objects itself (collect_young)
    never sets one off, so its owner runs one now and then, in a turn of the event loop of its
    own, or cyclic garbage that outlived the young generations would wait for one the rest of
    linkdeck sets off."""
    gc.collect()


class Turns:
    """Pieces of a big pass (an answer's scan, its fold, a step of updates), each in a turn of
    the event loop that no other piece shares, as a timer's callback sees it.

    ``asyncio.sleep(0)`` between two pieces is not enough: it queues the task behind the
    callbacks already ready, but a timer that fell due during a piece is queued only at the
    loop's next pass, and the task its callback wakes one pass later still; so the pieces
    queued meanwhile (the next step, the other answer read at the same time, its fold) all ran
    first, and a dashboard's timer waited for two answers' scans and folds together. A piece
    here waits on a timer of its own, set after the
    previous piece ended, so every timer due before it comes first; and on a lock, so two
    tasks' pieces take turns too."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self._lock:
            # any delay above zero: zero is the bare yield above
            await asyncio.sleep(1e-6)
            yield


# mallopt's parameter numbers (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
# Both thresholds, above glibc's defaults (128 KiB) so asyncio's reads come from the heap: its
# pipe and socket transports read up to 256 KiB at a time into a new bytes object, shrunk to
# what came, and at the defaults every such read (each host's frame, every tick) was an mmap,
# an mremap and a munmap. The trim threshold as high, so the space such a read leaves at the
# heap's top stays for the next one rather than going back to the kernel each time.
MALLOC_THRESHOLD_BYTES = 512 * 1024


@functools.cache  # once per process: it finds libc (ldconfig) and the setting is for good
def pin_malloc_thresholds() -> bool:
    """Fix glibc's mmap and trim thresholds (at MALLOC_THRESHOLD_BYTES), so they stop adapting.

    glibc raises both as a program runs: once a block it had mmap()ed is freed, blocks up to
    that size come from the heap instead, and the heap keeps up to twice that size of free
    space at its top before giving any back (up to 32 and 64 MiB; malloc(3), M_MMAP_THRESHOLD).
    A dashboard on SSH hosts frees such a block early on, and from then on every heap (the main
    one and each paramiko thread's) crept by freed-but-kept memory, the bytes in use flat
    (bench/bench_soak.py measures it).
    Setting either threshold turns that adaptation off for the process. True where it took
    (glibc); elsewhere (musl, macOS, Windows) nothing to do."""
    path = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(path).mallopt if path else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MALLOC_THRESHOLD_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, MALLOC_THRESHOLD_BYTES)
    )
