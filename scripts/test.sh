#!/usr/bin/env bash
# Builds and runs the whole test suite: normal build, ASan+UBSan build,
# Oclgrind, and a bounded libFuzzer run; ends with a count of the stages.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0
passed=0
failed=0
# Runs one stage; counts it as passed or failed (the suite goes on either way).
stage() { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi; }
echo "== build + tests (RelWithDebInfo)"
cmake --preset default >/dev/null
cmake --build build -j "$jobs"
stage ctest --preset default -j "$jobs"
echo "== build + tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake --preset asan >/dev/null
cmake --build build-asan -j "$jobs"
stage ctest --preset asan -j "$jobs"
if command -v oclgrind >/dev/null; then
  echo "== kernel tests under Oclgrind"
  stage ctest --preset oclgrind -j "$jobs"
fi
if command -v clang >/dev/null; then
  echo "== libFuzzer targets, ${TANDEM_FUZZ_SECONDS:-30} s each"
  stage bash scripts/fuzz.sh "${TANDEM_FUZZ_SECONDS:-30}"
fi
echo "test stages (normal, sanitizers, oclgrind, fuzzing):"
echo "$passed passed, $failed failed"
exit $status
