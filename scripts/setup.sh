#!/usr/bin/env bash
# Creates .venv with Python 3.11, 3.12 or 3.13 and installs the exact lock plus the `helpers` package.
#   scripts/setup.sh         what the lessons need (requirements.txt): `make lab`, `make lessons`
#   scripts/setup.sh --dev   that plus the test tools (requirements-dev.txt): `make test`
# Called by `make` only when the lock or packaging files changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
lock=requirements.txt
[ "${1:-}" = "--dev" ] && lock=requirements-dev.txt

supported() {  # 0 if $1 is a Python 3.11, 3.12 or 3.13 (it says so: a program that ignores -c does not)
  [ "$("$1" -c 'import sys; print((3, 11) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null)" = True ]
}

pick_python() {
  if [ -n "${PYTHON:-}" ]; then  # asked for: that one or a clear no, never another Python in silence
    if command -v "$PYTHON" >/dev/null 2>&1 && supported "$PYTHON"; then echo "$PYTHON"; return 0; fi
    echo "PYTHON=$PYTHON is not a Python 3.11, 3.12 or 3.13 this shell can run." >&2
    return 1
  fi
  for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 && supported "$candidate"; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

# A .venv made by an earlier version of the course carries PyTorch (2 GB) that nothing needs now,
# and a .venv of an unsupported Python cannot take the lock: start those afresh.
if [ -x .venv/bin/python ] && { ! supported .venv/bin/python || [ -d .venv/lib/python3.11/site-packages/torch ]; }; then
  echo "Removing the old .venv (unsupported Python, or PyTorch from an earlier version of the course)"
  rm -rf .venv
fi

if [ ! -x .venv/bin/python ]; then
  py=$(pick_python) || {
    echo "This course needs Python 3.11, 3.12 or 3.13 (python3 on PATH, or PYTHON=/path/to/python3.12)." >&2
    echo "With conda: conda env create -f environment.yml" >&2
    exit 1
  }
  echo "Creating .venv with $($py --version)"
  "$py" -m venv .venv
fi

# One setup at a time (`make lab` and `make check` started together would share a half-made .venv).
until mkdir .venv.lock 2>/dev/null; do
  echo "Waiting for another setup of this folder to finish (no setup running? remove .venv.lock)"; sleep 5
done
trap 'rmdir .venv.lock' EXIT
start=$(date +%s)
# A current pip resolves the ~160 pinned packages about a minute faster than the one venv ships.
.venv/bin/python -m pip install --quiet --disable-pip-version-check "pip==26.3" \
  2> >(grep -v "is neither a file nor a directory" >&2)
echo "Installing $lock (first time: about 1-2 minutes, about 1 GB)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$lock" \
  2> >(grep -v "is neither a file nor a directory" >&2)
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e . \
  2> >(grep -v -e "is neither a file nor a directory" >&2)
echo "Setup done in $(( $(date +%s) - start )) s"
