"""The vector reader: Prometheus's own form of an answer read by one regular expression, every
other form by JSON parsing, to the same rows. (A real Prometheus's answers: the lab test
test_every_answer_of_a_real_prometheus_is_read_without_json.) The answers here are constructed."""

from __future__ import annotations

import orjson
import pytest

from linkdeck.prometheus.vector import fast_rows, parsed_rows

LABELS = ("device", "instance", "linkdeck")


def answer(*series: str) -> bytes:
    return ('{"status":"success","data":{"resultType":"vector","result":[' + ",".join(series) + "]}}").encode()


def rows_by_json(content: bytes, labels=LABELS) -> list:
    return parsed_rows(orjson.loads(content)["data"]["result"], labels)


def test_prometheus_form_is_read_in_one_pass_to_the_rows_json_gives() -> None:
    content = answer(
        '{"metric":{"device":"eth0","instance":"n1:9100"},"value":[1795357005.123,"1062500000"]}',
        '{"metric":{"instance":"n1:9100","linkdeck":"scrape_time"},"value":[1795357005.123,"1795357004.9"]}',
        '{"metric":{"device":"lo","instance":"[2001:db8::1]:9100"},"value":[1795357005,"NaN"]}',
        '{"metric":{"device":"eth1"},"value":[1795357005,"7"]}',  # no instance: the fold skips it
    )
    fast = fast_rows(content, LABELS)
    assert fast == [
        ("eth0", "n1:9100", "", "1062500000"),
        ("", "n1:9100", "scrape_time", "1795357004.9"),
        ("lo", "[2001:db8::1]:9100", "", "NaN"),
        ("eth1", "", "", "7"),
    ]
    assert fast == rows_by_json(content)
    assert fast_rows(answer(), LABELS) == [] == rows_by_json(answer())


@pytest.mark.parametrize(
    "series",
    [
        '{"metric":{"device":"e\\"th0","instance":"n1:9100"},"value":[1,"5"]}',  # an escaped quote
        '{"metric":{"device":"eth\\u00e90\\u001b[31m","instance":"n1:9100"},"value":[1,"5"]}',  # \\u escapes
        '{"metric":{"device":"eth0\\\\","instance":"n1:9100"},"value":[1,"5"]}',  # a backslash
        '{"metric":{"device":"eth0","instance":"n1:9100","job":"node"},"value":[1,"5"]}',  # a label not asked for
        '{"metric":{"instance":"n1:9100","device":"eth0"},"value":[1,"5"]}',  # not sorted
        '{"metric": {"device":"eth0","instance":"n1:9100"}, "value":[1,"5"]}',  # spaces
        '{"metric":{"device":"eth0","instance":"n1:9100"},"value":[1,5]}',  # a number, not its text
    ],
    ids=["quote", "unicode", "backslash", "extra-label", "unsorted", "spaces", "bare-number"],
)
def test_any_other_form_is_left_to_json_and_nothing_is_skipped(series) -> None:
    plain = '{"metric":{"device":"eth1","instance":"n1:9100"},"value":[1,"6"]}'
    content = answer(plain, series)
    assert fast_rows(content, LABELS) is None  # one series it cannot read whole: JSON reads them all
    rows = rows_by_json(content)
    assert rows[0] == ("eth1", "n1:9100", "", "6") and len(rows) == 2


@pytest.mark.parametrize(
    "content",
    [
        answer('{"metric":{,},"value":[1,"2"]}'),
        answer('{"metric":{"device":"eth0",},"value":[1,"2"]}'),
        answer('{"metric":{"device":"eth0""instance":"n1"},"value":[1,"2"]}'),
        answer('{"metric":{"device":"eth0"},"value":[1,"2"]'),
        b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{"device":"\xff"},"value":[1,"2"]}]}}',
        b'{"status":"error","errorType":"bad_data","error":"{\\"metric\\":"}',
        b'{"status":"success","data":{"resultType":"matrix","result":[]}}',
    ],
    ids=["empty-commas", "trailing-comma", "no-comma", "unclosed", "not-utf8", "error", "matrix"],
)
def test_what_is_not_prometheus_form_is_not_read_by_the_pattern(content) -> None:
    assert fast_rows(content, LABELS) is None


def test_a_series_without_labels_or_a_value_is_an_error_when_parsed() -> None:
    for bad in (
        {"value": [1, "2"]},
        {"metric": {"device": "eth0"}},
        {"metric": {"device": "eth0"}, "value": [1]},
        {"metric": [], "value": [1, "2"]},
    ):
        with pytest.raises((KeyError, IndexError, AttributeError)):
            parsed_rows([bad], LABELS)
