# Sourced by run.sh and test.sh: a virtualenv in .venv with linkdeck installed (editable) and
# the given extras. A venv keeps Debian's externally-managed system Python (PEP 668) out of it.
ensure_venv() {
  local extras="$1"
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
    else
      echo "python3 cannot make a virtualenv: install python3-venv (apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}"
}
