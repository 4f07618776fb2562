#!/usr/bin/env bash
# Sets up everything the test suite needs on a fresh Debian machine, then runs it.
# The lab tests need root (network namespaces, sshd); as non-root they skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for cmd in iperf3 sshd ssh ssh-keygen ethtool ip tc pgrep unshare mount tcsh; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || need+=("$cmd")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq iperf3 openssh-server openssh-client ethtool iproute2 procps util-linux mount tcsh >/dev/null
  else
    echo "missing ${need[*]} (lab tests will skip): apt-get install iperf3 openssh-server ethtool iproute2 procps" >&2
  fi
fi

. scripts/venv.sh
ensure_venv "[test]"
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
