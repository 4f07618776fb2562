#!/usr/bin/env bash
# Lint and type-check (configured in pyproject.toml): ruff over the code, the tests and the
# benchmarks; mypy strict over the core packages. scripts/test.sh runs this before the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check --quiet src tests bench
.venv/bin/mypy
