#!/usr/bin/env bash
# Lint, format and type-check (configured in pyproject.toml): ruff over the code, the tests and
# the benchmarks (`ruff format` and `ruff check --fix` fix most of what they find); mypy over
# the whole package, strict on the core. scripts/test.sh runs this before the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check --quiet src tests bench scripts
.venv/bin/ruff format --check --quiet src tests bench scripts
.venv/bin/mypy
bash scripts/check_scripts.sh
