#!/usr/bin/env bash
# The samplers' sh files (src/linkdeck/platforms/scripts/) and the benchmarks' (bench/): `sh -n`
# under each shell the tests run them in, and shellcheck as POSIX sh (the lab's too, tests/lab/). Their awk files are checked by running them
# (tests/unit/platforms/test_script_files.py runs each under mawk, gawk and busybox awk).
# Each file's ignore list is a `# shellcheck disable=` line in the file, with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
for script in src/linkdeck/platforms/scripts/*.sh bench/*.sh; do
    for shell in sh dash bash "busybox sh"; do
        if command -v "${shell%% *}" >/dev/null; then $shell -n "$script"; fi
    done
done
shellcheck --shell=sh --severity=style src/linkdeck/platforms/scripts/*.sh bench/*.sh tests/lab/*.sh
