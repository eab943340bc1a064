#!/usr/bin/env bash
# Builds and runs the whole test suite: normal build, ASan+UBSan build, Oclgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0
echo "== build + tests (RelWithDebInfo)"
cmake --preset default >/dev/null
cmake --build build -j "$jobs"
ctest --preset default -j "$jobs" || status=1
echo "== build + tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake --preset asan >/dev/null
cmake --build build-asan -j "$jobs"
ctest --preset asan -j "$jobs" || status=1
if command -v oclgrind >/dev/null; then
  echo "== kernel tests under Oclgrind"
  ctest --preset oclgrind -j "$jobs" || status=1
fi
if command -v clang >/dev/null; then
  echo "== libFuzzer targets, ${TANDEM_FUZZ_SECONDS:-30} s each"
  bash scripts/fuzz.sh "${TANDEM_FUZZ_SECONDS:-30}" || status=1
fi
exit $status
