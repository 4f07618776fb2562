#!/usr/bin/env bash
# Sets up everything the test suite needs on a fresh Debian machine, then runs it.
# The lab tests need root (network namespaces, sshd); as non-root they skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."

# what the suite's commands come from (Debian packages): the README's quick start lists them
apt_pkgs=(iperf3 openssh-server openssh-client ethtool iproute2 procps util-linux mount tcsh iputils-ping strace busybox shellcheck gawk)
prom_pkgs=(prometheus prometheus-node-exporter)
need=()
for cmd in iperf3 sshd ssh ssh-keygen ethtool ip tc pgrep unshare mount tcsh ping strace busybox shellcheck gawk prometheus prometheus-node-exporter chromium; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || need+=("$cmd")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # The Prometheus lab starts its own daemons; the packages' services must not start.
    no_start=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && no_start=1
    fi
    apt-get install -y -qq "${apt_pkgs[@]}" >/dev/null
    apt-get install -y -qq --no-install-recommends "${prom_pkgs[@]}" >/dev/null
    # the report test renders linkdeck's HTML report in a real headless browser
    command -v chromium >/dev/null 2>&1 || apt-get install -y -qq chromium >/dev/null
    [ -z "$no_start" ] || rm -f /usr/sbin/policy-rc.d
  else
    echo "missing ${need[*]} (lab tests will skip): apt-get install ${apt_pkgs[*]} ${prom_pkgs[*]} chromium" >&2
  fi
fi

# The lab's hosts of the newer iperf3 era (Debian ships 3.12; 3.16 runs a thread per stream,
# 3.17 has --json-stream): iperf3 3.21 built from ../shared/vendor into .lab-tools/, which the
# lab puts first on such a host's login PATH (tests/lab/iperf3_new.py). When it cannot be
# built, the reason goes to a file and the tests that need it skip with it.
new_iperf3=.lab-tools/iperf3-3.21
mkdir -p .lab-tools
if [ ! -x "$new_iperf3/bin/iperf3" ]; then
  why=.lab-tools/iperf3-3.21.why
  if [ ! -f ../shared/tools/build-iperf3.sh ]; then
    echo "../shared/tools/build-iperf3.sh is not beside the clone" >"$why"
  else
    if ! { command -v cc && command -v make; } >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential >/dev/null || true
    fi
    if bash ../shared/tools/build-iperf3.sh "$PWD/$new_iperf3" >/dev/null 2>"$why.log"; then
      rm -f "$why" "$why.log"
    else
      { echo "building iperf3 3.21 failed: $(tail -1 "$why.log")"; } >"$why"; rm -f "$why.log"
      echo "iperf3 3.21 not built (its lab tests will skip): $(cat "$why")" >&2
    fi
  fi
fi

. scripts/venv.sh
ensure_venv "[test]"
# The whole run (CI, the README's quick start) lints and type-checks first; a chosen subset
# of tests (any argument) runs just those.
[ $# -gt 0 ] || bash scripts/check.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
