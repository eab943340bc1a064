#!/usr/bin/env bash
# The package as a user installs it (ctest: test_python_package and
# test_python_eval): python/tests_package/run.sh VENV LIBTANDEM CLI [pytest args].
# Makes VENV (a virtual environment in the build tree, kept between runs) with
# the first python3 on PATH (any 3.9+, Debian's or not), installs the test
# dependencies from PyPI into it (pytest, python-terrier, ir_measures,
# pytrec_eval-terrier), builds the wheel from the checkout with `pip wheel`
# (scikit-build-core runs CMake), installs that wheel offline (--no-index),
# and runs pytest here on the installed package: no PYTHONPATH, no
# TANDEM_LIBRARY (LIBTANDEM, the build tree's library, is passed as
# TANDEM_BUILD_LIBRARY for the override test). Exit 77 (skipped) only without
# a python3 >= 3.9 that has venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$(realpath -m "${1:?usage: run.sh VENV LIBTANDEM CLI [pytest args]}")
lib=${2:?}
cli=${3:?}
shift 3
py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  echo "python package tests skipped: no python3 >= 3.9 with venv and ensurepip"
  exit 77
fi
data=${TANDEM_TEST_DATA:-$here/../../../shared/data}
if [ "${TANDEM_NEED_DATA:-0}" = 1 ] && { [ ! -d "$data/cranfield" ] || [ ! -d "$data/cacm" ]; }; then
  echo "python evaluation tests skipped: no Cranfield/CACM under $data (TANDEM_TEST_DATA)"
  exit 77
fi
export TANDEM_TEST_DATA=$data
unset PYTHONPATH TANDEM_LIBRARY
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
vpy=$venv/bin/python
# Quiet when already there (a rerun in the same build tree).
"$vpy" -m pip install -q pytest python-terrier ir_measures pytrec_eval-terrier
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tandem-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
t0=$SECONDS
if ! "$vpy" -m pip wheel -q --no-deps -w "$tmp/wheel" "$here/../" >"$tmp/wheel.log" 2>&1; then
  cat "$tmp/wheel.log"
  echo "pip wheel ./python failed (log above)" >&2
  exit 1
fi
echo "wheel built in $((SECONDS - t0)) s: $(ls "$tmp/wheel")"
"$vpy" -m pip install -q --no-index --no-deps --force-reinstall "$tmp"/wheel/tandem-*.whl
export TANDEM_BUILD_LIBRARY=$lib TANDEM_CLI=$cli
export TANDEM_SOURCE_DIR=$(cd "$here/../.." && pwd)
# From a directory outside the checkout, so that `import tandem` is the
# installed package, not python/tandem.
cd "$tmp"
# TANDEM_PYTEST_ARGS: which tests (ctest splits them in two).
read -r -a extra <<<"${TANDEM_PYTEST_ARGS:-}"
"$vpy" -m pytest -p no:cacheprovider -rs -q --basetemp="$tmp/t" "$here" "${extra[@]}" "$@"
