# Sourced by demo.sh and test.sh: create .venv and install drivemt (with test tools) with pip.
# torch 2.14.1 / torchvision 0.29.1 are pinned in pyproject.toml (both install from local disk on
# the build machines). Re-running is cheap: pip skips what is installed already.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.drivemt-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip setuptools wheel
  .venv/bin/python -m pip install --quiet -e '.[test]'
  touch "$stamp"
fi
