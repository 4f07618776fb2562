#!/usr/bin/env bash
# Sets up linkdeck in ./.venv and starts it; arguments go to linkdeck (e.g. HOST ...).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
ensure_venv ""
exec .venv/bin/linkdeck "$@"
