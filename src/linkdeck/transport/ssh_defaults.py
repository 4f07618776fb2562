"""What OpenSSH's client assumes where the user's config says nothing, for the readers that
fill in defaults as ``ssh -G`` does (ssh_builtin.py) and the conversion of their answer
(ssh_config.py). Its own module so that neither needs the other, nor paramiko, to know them."""

from __future__ import annotations

import getpass

# What ssh -G prints when the config names no IdentityFile, in its order.
OPENSSH_DEFAULT_IDENTITIES = (
    "~/.ssh/id_rsa",
    "~/.ssh/id_ecdsa",
    "~/.ssh/id_ecdsa_sk",
    "~/.ssh/id_ed25519",
    "~/.ssh/id_ed25519_sk",
    "~/.ssh/id_xmss",
    "~/.ssh/id_dsa",
)


def local_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no USER and no passwd entry (a bare container)
        return "root"
