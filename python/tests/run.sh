#!/usr/bin/env bash
# Runs the Python package's tests (pytest) for ctest: python/tests/run.sh
# LIBTANDEM [pytest args...]. Picks the first interpreter (TANDEM_PYTHON,
# /usr/bin/python3, python3) that has numpy and pytest (Debian's
# python3-numpy, python3-pytest); without one it says why and exits 77, which
# ctest reports as skipped. The package is used from the checkout (PYTHONPATH)
# with the library given, so the tests need no install.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=${1:?usage: run.sh LIBTANDEM [pytest args]}
shift
py=
for cand in "${TANDEM_PYTHON:-}" /usr/bin/python3 python3; do
  [ -n "$cand" ] || continue
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import numpy, pytest" >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
if [ -z "$py" ]; then
  echo "python tests skipped: no python3 with numpy and pytest (apt-get install python3-numpy python3-pytest)"
  exit 77
fi
export TANDEM_LIBRARY=$lib
# A library built with ASan/UBSan (the asan preset) loads into Python only
# after the sanitizer runtimes; Python's own allocations at exit are no leak
# of tandem's, so leak detection is off here (the C tests keep it).
# (ldd's output read whole: under pipefail, `ldd | grep -q` fails when grep
# leaves early and ldd dies of SIGPIPE; the runtimes then go unloaded, the
# likely cause of the ASan stage's one failure of this test in 0.3 s)
deps=$(ldd "$lib" 2>/dev/null || true)
if grep -q 'libasan' <<<"$deps"; then
  pre=
  for rt in $(awk '/lib(asan|ubsan)\.so/ {print $3}' <<<"$deps"); do pre="$pre $rt"; done
  export LD_PRELOAD="${pre# }${LD_PRELOAD:+ $LD_PRELOAD}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
export PYTHONPATH="$here/..${PYTHONPATH:+:$PYTHONPATH}"
export TANDEM_INCLUDE=${TANDEM_INCLUDE:-$here/../../include}
tmp=${TANDEM_TEST_TMP:-${TMPDIR:-/tmp}}
mkdir -p "$tmp"
# A base directory of this run's own: pytest empties --basetemp first, so a
# fixed name let two runs at once (two build trees' suites) delete each
# other's files.
base=$(mktemp -d "$tmp/pytest-python.XXXXXX")
trap 'rm -rf "$base"' EXIT
# -p no:cacheprovider: no .pytest_cache in the source tree; -rs lists skips.
"$py" -m pytest -p no:cacheprovider -rs -q --basetemp="$base/t" "$here" "$@"
