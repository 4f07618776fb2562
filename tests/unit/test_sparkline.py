"""The sparkline's columns (ui/widgets/sparkline.py) against their plain definition, on random
histories with and without unknown samples."""

from __future__ import annotations

import random

import pytest

from linkdeck.ui.widgets.sparkline import BARS, _bucket, spark


def columns_by_definition(values, width, capacity=0):
    """Each column is the largest known sample of its share of the newest ``capacity`` slots."""
    if width <= 0:
        return []
    capacity = max(capacity, len(values), 1)
    slots = [None] * (capacity - len(values)) + list(values[-capacity:])
    if width >= capacity:
        return [slots[j * capacity // width] for j in range(width)]
    shares = [slots[j * capacity // width : (j + 1) * capacity // width] for j in range(width)]
    return [max((v for v in share if v is not None), default=None) for share in shares]


@pytest.mark.parametrize("unknown", [0.0, 0.1])
def test_columns_are_the_largest_sample_of_their_share(unknown):
    rng = random.Random(7)
    for _ in range(4000):
        n = rng.randint(0, 130)
        values = tuple(
            None if rng.random() < unknown else rng.choice([0.0, rng.random() * 10 ** rng.randint(0, 10)])
            for _ in range(n)
        )
        width, capacity = rng.randint(-1, 100), rng.choice([0, 1, 30, 60, 120, n])
        assert _bucket(values, width, capacity) == columns_by_definition(values, width, capacity)


def test_a_spark_scales_to_its_top_and_leaves_unknown_blank():
    assert spark((None, 0.0, 5.0, 10.0), 4, 10.0) == " " + BARS[1] + BARS[4] + BARS[8]
    assert spark((None, 0.0), 2) == " " + BARS[1]  # nothing to scale to: a baseline
    assert spark((1.0, 2.0, 3.0, 4.0), 2, 4.0, capacity=4) == BARS[4] + BARS[8]
