"""An instant query's answer read as rows: for each series, the values of the labels the query
groups by (in the order of their names, ``""`` where a series has none: Prometheus drops empty
labels) and the sample's value as Prometheus writes it.

Parsed as JSON, 90,000 series become 90,000 label dicts, value lists and their strings, made
only to be read once and dropped: at 10,000 hosts most of a refresh's CPU, and each answer one
wait of the event loop. Prometheus writes these answers in one form (labels sorted by name, no
spaces), so one regular expression per set of label names reads them in C, a tuple per series.
An answer in any other form (a label value with an escape, a label the query did not group
by, an error, a different Prometheus) is parsed as JSON instead: both give the same rows, and
which one is used is decided by counting the series, so none is ever skipped.
"""

from __future__ import annotations

import functools
import re

Row = tuple[str, ...]  # each named label's value ("" where absent), then the value's text

_VECTOR = b'{"status":"success","data":{"resultType":"vector","result":['
_SERIES = '{"metric":'  # only where a series starts: in JSON text a quote inside a string is escaped


@functools.cache
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    # each label optional, a comma only between two of them; a value with no quote or backslash
    labels = "".join(f'(?:"{re.escape(name)}":"([^"\\\\]*)"(?:,(?=")|(?=\\}})))?' for name in names)
    return re.compile(f'\\{{"metric":\\{{{labels}\\}},"value":\\[[^\\],]*,"([^"\\\\]*)"\\]\\}}')


def fast_rows(content: bytes, names: tuple[str, ...]) -> list[Row] | None:
    """The rows of a successful vector answer whose every series has no labels but ``names``
    (sorted, as Prometheus writes them) and no escape in them; None for any other answer."""
    if not names or not content.startswith(_VECTOR):
        return None
    try:
        text = content.decode()
    except UnicodeDecodeError:
        return None
    found = _pattern(names).findall(text)
    return found if len(found) == text.count(_SERIES) else None


def parsed_rows(series: list, names: tuple[str, ...]) -> list[Row]:
    """The same rows from the parsed ``result``: KeyError, IndexError, TypeError or
    AttributeError for a series without labels or a value."""
    return [(*(str(item["metric"].get(name, "")) for name in names), item["value"][1]) for item in series]
