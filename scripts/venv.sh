# Sourced by run.sh and test.sh: a virtualenv in .venv with linkdeck installed (editable) and
# the given extras. A venv keeps Debian's externally-managed system Python (PEP 668) out of it.
# Installed once: a stamp holds the hash of pyproject.toml's project tables and the extras, so
# a later start goes straight to linkdeck, with no package index needed (the network may be what
# is broken).
ensure_venv() {
  local extras="$1"
  local stamp=".venv/.installed${extras}"
  local want
  # What an install depends on: the project's own tables, not the tools' settings ([tool.*]),
  # whose change must not send a later start to a package index.
  want=$(awk '/^\[/ { keep = ($0 ~ /^\[(project|build-system)([].]|$)/) } keep' pyproject.toml | cksum)
  if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "linkdeck setup: installing python3-venv with apt-get" >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
    else
      echo "python3 cannot make a virtualenv: install python3-venv (apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
  echo "linkdeck setup: installing linkdeck${extras} and its dependencies into ./.venv (once; about 20 s)" >&2
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}"
  echo "$want" >"$stamp"
}
