from pathlib import Path

import pytest

from linkdeck.settings import config
from linkdeck.settings.config import ConfigError, HostSpec, host_from_arg, parse

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "linkdeck.example.toml"


def test_example_config_parses_with_documented_defaults():
    s = config.load(str(EXAMPLE))
    assert s.interval == 1.0 and s.facts_every == 10 and s.host_key_policy == "strict"
    assert s.units == "bits" and s.test_duration == 5 and s.test_port == 5201
    assert s.thresholds.window_s == 30 and s.thresholds.outlier_ratio == 0.5
    assert s.hosts == (HostSpec(name="nas01", address="nas01.example.net", tags=("storage",)),)


def test_every_settings_key_is_documented_in_the_example():
    text = EXAMPLE.read_text()
    for key in (
        "interval",
        "facts_every",
        "local",
        "host_key_policy",
        "ssh_config",
        "known_hosts",
        "units",
        "hide",
        "fold_idle",
        "columns",
        "save_dir",
        "duration",
        "port",
        "errors_per_s",
        "drops_per_s",
        "window_s",
        "outlier_ratio",
        "[speed]",
        "name",
        "address",
        "user",
        "identity_file",
        "jump",
        "tags",
        "[[mute]]",
        "code",
        "interface",
    ):
        assert key in text, key


def test_unknown_key_names_file_line_and_key(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('interval = 2\n\n[ui]\nunits = "bits"\ncolour = "red"\n')
    with pytest.raises(ConfigError) as err:
        config.load(str(f))
    assert err.value.line == 5
    assert err.value.key == "ui.colour"
    assert str(err.value).startswith(f"{f}:5: ui.colour: unknown key")


@pytest.mark.parametrize(
    "text, said",
    [
        ("intervall = 2\n", "intervall: unknown key: did you mean 'interval'? (known: "),
        (
            "[thresholds]\nwindow = 5\n",
            "thresholds.window: unknown key in [thresholds]: did you mean 'window_s'? (known: ",
        ),
        (
            '[[hosts]]\nname = "a"\nadress = "a.example"\n',
            "hosts.adress: unknown key in [[hosts]]: did you mean 'address'? (known: ",
        ),
        (
            '[[mute]]\ninterfaces = "veth*"\n',
            "mute.interfaces: unknown key in [[mute]]: did you mean 'interface'? (known: ",
        ),
        (
            '[prometheus]\nurl = "http://127.0.0.1:9090"\nintervl = 5\n',
            "unknown key in [prometheus]: did you mean 'interval'? (known: ",
        ),
        ("zebra = 1\n", "zebra: unknown key (known: "),  # nothing close: no guess
    ],
)
def test_an_unknown_key_suggests_the_closest_known_one(text, said):
    with pytest.raises(ConfigError) as err:
        parse(text)
    assert said in str(err.value)


def test_wrong_type_and_range():
    with pytest.raises(ConfigError, match=r":1: interval: expected a number, got 'fast'"):
        parse('interval = "fast"\n')
    with pytest.raises(ConfigError, match=r"interval: must be a number between 0.1 and 3600 seconds, not 0"):
        parse("interval = 0\n")
    with pytest.raises(ConfigError, match=r"host_key_policy"):
        parse('host_key_policy = "yolo"\n')
    with pytest.raises(ConfigError, match=r":3: hosts.port: must be a TCP port"):
        parse('[[hosts]]\nname = "a"\nport = 70000\n')


def test_ui_columns_set_and_order_and_an_unknown_column_named():
    s = parse('[ui]\ncolumns = ["rx", "tx", "oper"]\n')
    assert s.ui_columns == ("rx", "tx", "oper")
    assert parse("").ui_columns == config.UI_COLUMNS
    with pytest.raises(
        ConfigError, match=r":3: ui.columns: unknown column 'errs' \(known: oper, speed, mtu, rx, tx, errors"
    ):
        parse('[ui]\nunits = "bits"\ncolumns = ["rx", "errs"]\n')
    with pytest.raises(ConfigError, match=r"ui.columns: a column is listed twice"):
        parse('[ui]\ncolumns = ["rx", "rx"]\n')
    with pytest.raises(ConfigError, match=r"ui.columns: expected a list"):
        parse('[ui]\ncolumns = "rx"\n')


def test_booleans_are_not_numbers():
    with pytest.raises(ConfigError, match="expected a number"):
        parse("interval = true\n")


def test_syntax_error_has_line():
    with pytest.raises(ConfigError) as err:
        parse("interval = 1\n[ui\n")
    assert err.value.line == 2
    assert "not valid TOML" in str(err.value)


def test_passwords_are_refused():
    with pytest.raises(ConfigError, match="ssh keys and ssh-agent") as err:
        parse('[[hosts]]\nname = "a"\npassword = "hunter2"\n')
    assert err.value.line == 3
    assert "hunter2" not in str(err.value)


def test_duplicate_host_names():
    with pytest.raises(ConfigError, match="used twice"):
        parse('[[hosts]]\nname = "a"\n[[hosts]]\nname = "a"\n')


def test_speed_overrides():
    s = parse('[speed]\n"nas/vtnet0" = 10000\n')
    assert s.speed_overrides == {"nas/vtnet0": 10000}
    with pytest.raises(ConfigError, match="host/interface"):
        parse("[speed]\nvtnet0 = 10000\n")


def test_config_search_order(tmp_path, monkeypatch):
    env_file = tmp_path / "env.toml"
    env_file.write_text("interval = 3\n")
    monkeypatch.setenv("LINKDECK_CONFIG", str(env_file))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.load(None).interval == 3
    explicit = tmp_path / "x.toml"
    explicit.write_text("interval = 4\n")
    assert config.load(str(explicit)).interval == 4
    monkeypatch.delenv("LINKDECK_CONFIG")
    assert config.load(None) == config.Settings()  # nothing in the user dir: defaults
    (tmp_path / "xdg" / "linkdeck").mkdir(parents=True)
    (tmp_path / "xdg" / "linkdeck" / "config.toml").write_text("interval = 5\n")
    assert config.load(None).interval == 5


def test_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        config.load(str(tmp_path / "nope.toml"))


@pytest.mark.parametrize(
    "arg, expected",
    [
        ("nas01", HostSpec(name="nas01", address="nas01")),
        ("root@10.0.0.5:2222", HostSpec(name="root@10.0.0.5:2222", address="10.0.0.5", user="root", port=2222)),
        ("admin@[fd00::5]:22", HostSpec(name="admin@[fd00::5]:22", address="fd00::5", user="admin", port=22)),
    ],
)
def test_host_args(arg, expected):
    assert host_from_arg(arg) == expected


@pytest.mark.parametrize("bad", ["-oProxyCommand=evil", "a b", "x@y:99999", "a;rm -rf /", "$(id)"])
def test_hostile_host_args_are_refused(bad):
    with pytest.raises(ConfigError):
        host_from_arg(bad)


def test_host_arg_prefers_configured_name():
    known = (HostSpec(name="nas", address="10.1.1.1", user="admin"),)
    assert host_from_arg("nas", known) is known[0]
    assert host_from_arg("local").local


def test_hostile_config_addresses_are_refused():
    with pytest.raises(ConfigError, match=r":3: hosts.address: not a host name"):
        parse('[[hosts]]\nname = "a"\naddress = "-oProxyCommand=touch /tmp/x"\n')
    with pytest.raises(ConfigError, match=r"hosts.user: not a user name"):
        parse('[[hosts]]\naddress = "a"\nuser = "root; id"\n')


@pytest.mark.parametrize(
    "text, message",
    [
        ('hosts = ["a"]\n', "must be an array of tables"),
        ("hosts = [1]\n", "must be an array of tables"),
        ('mute = ["x"]\n', "must be an array of tables"),
        ('[speed]\n"local/eth0" = 0\n', "a link speed in Mb/s"),
        ('[speed]\n"local/eth0" = -5\n', "a link speed in Mb/s"),
    ],
)
def test_misshapen_sections_are_clear_errors(text, message):
    with pytest.raises(ConfigError, match=message):
        parse(text)


def test_a_binary_config_file_is_one_line_naming_it(tmp_path):
    path = tmp_path / "linkdeck.toml"
    path.write_bytes(b"interval = 1\n\x7fELF\x02\x01\x01\x00\x00\xff\xfe\n")
    with pytest.raises(ConfigError, match=r"linkdeck.toml:2: not UTF-8 text"):
        config.load(str(path))
    path.write_bytes(b"interval = 1\nx\x00y\n")
    with pytest.raises(ConfigError, match=r"linkdeck.toml:2: contains NUL bytes"):
        config.load(str(path))


@pytest.mark.parametrize(
    "text, key",
    [
        ("interval = nan\n", "interval"),
        ("interval = inf\n", "interval"),
        ("[thresholds]\nwindow_s = nan\n", "window_s"),
        ("[thresholds]\nwindow_s = inf\n", "window_s"),
        ("[thresholds]\nerrors_per_s = nan\n", "errors_per_s"),
        ("[test]\nduration = nan\n", "duration"),
        ("[thresholds]\noutlier_ratio = 7\n", "outlier_ratio"),
    ],
)
def test_every_number_is_finite_and_in_range(text, key):
    with pytest.raises(ConfigError, match=rf"{key}: must be a number between"):
        parse(text)


@pytest.mark.parametrize(
    "text, where",
    [
        ("facts_every = 0\n", ":1: facts_every: must be a whole number between 1 and 1000000 ticks, not 0"),
        ("[test]\nport = 0\n", ":2: test.port: must be a TCP port (1-65535), not 0"),
        ('[[hosts]]\naddress = "nas"\nport = 70000\n', ":3: hosts.port: must be a TCP port (1-65535), not 70000"),
        ('[speed]\n"nas/igb0" = 0\n', ":2: speed.nas/igb0: must be a link speed in Mb/s (1-1600000), not 0"),
        (
            '[speed]\n"nas/igb0" = 2000000\n',
            ":2: speed.nas/igb0: must be a link speed in Mb/s (1-1600000), not 2000000",
        ),
        (
            '[prometheus]\nurl = "http://p:9090"\ninterval = 0.1\n',
            ":3: prometheus.interval: must be a number between 0.5 and 3600 seconds, not 0.1",
        ),
        (
            '[prometheus]\nurl = "http://p:9090"\ntimeout = 500\n',
            ":3: prometheus.timeout: must be a number between 0.5 and 120 seconds, not 500.0",
        ),
    ],
)
def test_each_bounded_number_is_checked_once_in_one_line_with_its_place(text, where):
    with pytest.raises(ConfigError) as caught:
        parse(text, Path("c.toml"))
    assert str(caught.value) == "c.toml" + where


def test_a_port_on_the_command_line_has_the_config_files_range():
    assert config.host_from_arg("nas:65535").port == 65535
    with pytest.raises(ConfigError, match=r"the port in 'nas:65536' must be a TCP port \(1-65535\), not 65536"):
        config.host_from_arg("nas:65536")


def test_command_line_overrides_go_through_the_same_checks():
    base = parse("")
    assert config.with_overrides(base, interval=0.5, test_duration=None).interval == 0.5
    for bad in (float("nan"), float("inf"), 0.0, 5000.0):
        with pytest.raises(ConfigError, match=r"--interval must be a number between 0.1 and 3600"):
            config.with_overrides(base, interval=bad)
    with pytest.raises(ConfigError, match=r"--time must be a number between 1 and 600"):
        config.with_overrides(base, test_duration=float("nan"))


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--config", "F", "snapshot", "--no-local"], ("snapshot", ["--no-local", "--config", "F"])),
        (["--no-local", "--ssh-config=S", "snapshot", "h1"], ("snapshot", ["h1", "--no-local", "--ssh-config=S"])),
        (["snapshot", "--config", "F"], ("snapshot", ["--config", "F"])),
        (
            ["--config", "F", "h1", "snapshot"],
            (None, ["--config", "F", "h1", "snapshot"]),
        ),  # a host first: the dashboard
        (["h1"], (None, ["h1"])),
    ],
)
def test_shared_options_before_or_after_the_sub_command(argv, expected):
    from linkdeck.cli import split_command

    assert split_command(argv) == expected


def test_ui_save_dir_moves_recordings_and_matrix_exports(tmp_path, monkeypatch):
    from linkdeck.ui.state.recording import default_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    f = tmp_path / "c.toml"
    f.write_text('[ui]\nsave_dir = "~/saved"\n')
    assert default_dir(config.load(str(f)).save_dir) == tmp_path / "saved"
    # unset: the user data dir, never the directory linkdeck was started from
    assert default_dir(None).parts[-2:] == ("linkdeck", "recordings") and default_dir(None) != Path.cwd()
    f.write_text("[ui]\nsave_dir = 3\n")
    with pytest.raises(ConfigError, match="save_dir"):
        config.load(str(f))


def test_hide_is_read_as_its_mode_and_h_cycles_every_one() -> None:
    from linkdeck.ui.state.view_state import ViewState

    assert parse('[ui]\nhide = "idle"\n').hide is config.Hide.IDLE and parse("").hide is config.Hide.NONE
    view = ViewState.from_settings(parse('[ui]\nhide = "down"\n'), ())
    seen = [view.hide]
    for _ in range(3):
        view.next_hide()
        seen.append(view.hide)
    assert seen == [config.Hide.DOWN, config.Hide.IDLE, config.Hide.NONE, config.Hide.DOWN]
