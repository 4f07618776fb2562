"""``--prometheus`` and ``--match`` over the config's ``[prometheus]`` section."""

import argparse
from dataclasses import replace

import pytest

from linkdeck.commands.shared import with_prometheus
from linkdeck.settings.config import ConfigError, Settings
from linkdeck.settings.prometheus_section import PrometheusConfig


def args(**given: str) -> argparse.Namespace:
    return argparse.Namespace(prometheus=given.get("prometheus"), match=given.get("match"))


def test_the_url_and_match_given_on_the_command_line_win_over_the_config() -> None:
    config = replace(
        Settings(), prometheus=PrometheusConfig(url="http://old:9090", match='job="a"', bearer_token_file="/t")
    )
    got = with_prometheus(config, args(prometheus="http://new:9090", match='{job="b"}')).prometheus
    assert got == PrometheusConfig(url="http://new:9090", match='job="b"', bearer_token_file="/t")


def test_a_url_alone_makes_a_prometheus_section() -> None:
    assert with_prometheus(Settings(), args(prometheus="http://p:9090")).prometheus == PrometheusConfig(
        url="http://p:9090"
    )


def test_match_without_any_prometheus_says_what_to_give() -> None:
    with pytest.raises(ConfigError, match="give --prometheus URL"):
        with_prometheus(Settings(), args(match='job="a"'))


def test_a_bad_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a Prometheus URL"):
        with_prometheus(Settings(), args(prometheus="ftp://p"))
