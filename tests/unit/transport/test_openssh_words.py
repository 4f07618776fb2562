"""ssh's own failure messages (captured from OpenSSH 9.2 against the lab's sshd) become
linkdeck's transport errors, quoting ssh."""

from linkdeck.transport.openssh_words import failure, unknown_key, unverified
from linkdeck.transport.runner import AuthFailed, HostKeyChanged, Unreachable

CHANGED = (
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
    "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n"
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
    "IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\n"
    "Someone could be eavesdropping on you right now (man-in-the-middle attack)!\n"
    "It is also possible that a host key has just been changed.\n"
    "The fingerprint for the ED25519 key sent by the remote host is\n"
    "SHA256:NF6rzSrGmuGTvU301ZsnQSKr80cgC7uGFPj+Jy+xvns.\n"
    "Please contact your system administrator.\nAdd correct host key in /tmp/ldx-changed to get rid of this message.\n"
    'Offending ED25519 key in /tmp/ldx-changed:1\n  remove with:\n  ssh-keygen -f "/tmp/ldx-changed" -R "10.77.13.11"\n'
    "Host key for 10.77.13.11 has changed and you have requested strict checking.\nHost key verification failed.\n"
)


def test_a_changed_key_is_refused_with_ssh_s_fingerprint_and_line() -> None:
    err = failure(CHANGED, "root@10.77.13.11")
    assert isinstance(err, HostKeyChanged) and not err.retryable
    assert err.fingerprint == "SHA256:NF6rzSrGmuGTvU301ZsnQSKr80cgC7uGFPj+Jy+xvns"
    assert "“Host key for 10.77.13.11 has changed and you have requested strict checking.”" in str(err)
    assert "/tmp/ldx-changed:1" in str(err) and "ssh-keygen -R 10.77.13.11" in str(err)


def test_an_unknown_key_names_the_known_hosts_name_ssh_looked_up() -> None:
    said = (
        "No ED25519 host key is known for [10.77.13.11]:2222 and you have requested strict checking.\n"
        "Host key verification failed.\n"
    )
    got = unknown_key(said)
    assert got is not None and (got.name, got.key_type) == ("[10.77.13.11]:2222", "ED25519")
    # a jump host asked with no terminal says only this: the hops are checked one by one
    assert (
        unknown_key("Host key verification failed.\nkex_exchange_identification: Connection closed by remote host\n")
        is None
    )
    assert unverified("Host key verification failed.\nkex_exchange_identification: Connection closed by remote host\n")
    assert not unverified(CHANGED)


def test_auth_refused_and_names() -> None:
    denied = failure("root@10.77.13.11: Permission denied (publickey).\n", "root@10.77.13.11", ("/k/wrong",))
    assert isinstance(denied, AuthFailed) and not denied.retryable
    assert (
        "“root@10.77.13.11: Permission denied (publickey).”" in str(denied)
        and "/k/wrong" in str(denied)
        and "authorized_keys" in str(denied)
    )
    many = failure(
        "Received disconnect from 10.77.13.13 port 22:2: Too many authentication failures\r\n"
        "Disconnected from 10.77.13.13 port 22\r\n",
        "h3",
    )
    assert (
        isinstance(many, AuthFailed) and "MaxAuthTries" in str(many) and "Too many authentication failures" in str(many)
    )
    refused = failure("ssh: connect to host 10.77.13.11 port 2: Connection refused\n", "root@10.77.13.11:2")
    assert (
        isinstance(refused, Unreachable)
        and refused.retryable
        and "“ssh: connect to host 10.77.13.11 port 2: Connection refused”" in str(refused)
    )
    name = failure("ssh: Could not resolve hostname nonexistent.invalid: Name or service not known\n", "x")
    assert isinstance(name, Unreachable) and "does not resolve" in str(name)
    late = failure("ssh: connect to host 10.1.2.3 port 22: Connection timed out\n", "x")
    assert isinstance(late, Unreachable) and "no answer" in str(late)


def test_control_characters_in_what_ssh_quotes_are_escaped() -> None:
    err = failure("ssh: connect to host evil\x1b[2J port 22: Connection refused\n", "x")
    assert "\x1b" not in str(err) and "\\x1b[2J" in str(err)
