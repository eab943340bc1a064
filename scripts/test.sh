#!/usr/bin/env bash
# Builds and runs the whole test suite: normal build, ASan+UBSan build,
# Oclgrind, and a bounded libFuzzer run; ends with a count of the stages and
# the time each took.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0
passed=0
failed=0
times=()
# Runs one stage; counts it as passed or failed (the suite goes on either way).
stage() { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi; }
# CPU seconds (user + system) used so far by finished child processes (the
# builtin `times` in this shell, not in a pipe's subshell).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
cpu() { times > "$cpu_file"; }
cpu_read() { awk 'NR == 2 { split($0, t, /[ms ]+/); printf "%d", t[1] * 60 + t[2] + t[3] * 60 + t[4] }' "$cpu_file"; }
# timed <label> <command...>: runs the command, notes its wall-clock and CPU time.
timed() {
  local label=$1 t0=$SECONDS c0 c1
  cpu
  c0=$(cpu_read)
  shift
  "$@"
  cpu
  c1=$(cpu_read)
  times+=("$label $((SECONDS - t0)) s (cpu $((c1 - c0)) s)")
}
echo "== build + tests (RelWithDebInfo)"
# -Wall -Wextra clean, held by -Werror here (a Release build is clean too).
cmake --preset default -DTANDEM_WERROR=ON >/dev/null
timed "build" cmake --build build -j "$jobs"
timed "tests" stage ctest --preset default -j "$jobs" --output-on-failure
echo "== build + tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake --preset asan >/dev/null
timed "asan-build" cmake --build build-asan -j "$jobs"
timed "asan-tests" stage ctest --preset asan -j "$jobs" --output-on-failure
if command -v oclgrind >/dev/null; then
  echo "== kernel tests under Oclgrind"
  timed "oclgrind" stage ctest --preset oclgrind -j "$jobs" --output-on-failure
fi
# Mesa's rusticl (llvmpipe, the CPU): a third implementation, stricter than
# PoCL; small inputs (CMakePresets.json, rusticl): runtime, every codec,
# residency, batched decode, the list cache, damaged indexes, search,
# batches and their bounds cache, merge, pruning, seeds, AND's block
# selection, the scheduler's lanes and batches and migration across a PoCL
# and a rusticl lane, the CLI scripts (search, run, bench queries,
# temporary files, a new user's commands, effectiveness against Xapian's
# figures), Python. Repetition trimmed there, not coverage: test_cli_search's
# batch options in turn, effectiveness's two ways of sending queries
# (TANDEM_EFF_MODES). test_codec_serial skips rusticl (no_zcur: its kernel
# is never run there); PoCL's own test_cli_pocl_basic and test_bench_load
# are not here (docs/HACKING.md, portability).
# (the list read whole: under pipefail `tandem devices | grep -q` fails when
# grep leaves before the last line and tandem dies of SIGPIPE)
devices=$(RUSTICL_ENABLE=swrast ./build/tandem devices 2>/dev/null || true)
if grep -q rusticl <<<"$devices"; then
  echo "== device tests on rusticl (llvmpipe)"
  timed "rusticl" stage ctest --preset rusticl -j "$jobs" --output-on-failure
else
  echo "== rusticl stage skipped: RUSTICL_ENABLE=swrast tandem devices lists no rusticl device" \
       "(apt-get install mesa-opencl-icd libclc-15)"
fi
if command -v clang >/dev/null; then
  # The fuzz targets share a fixed time (TANDEM_FUZZ_TOTAL seconds, default
  # 120), so the suite's time does not grow with their number;
  # TANDEM_FUZZ_SECONDS sets each target's time instead.
  targets=$(grep -c '^tandem_fuzzer(' fuzz/CMakeLists.txt || true)
  each=$(( ${TANDEM_FUZZ_TOTAL:-120} / (targets > 0 ? targets : 1) ))
  each=${TANDEM_FUZZ_SECONDS:-$(( each > 5 ? each : 5 ))}
  echo "== libFuzzer targets, $each s each"
  timed "fuzz" stage bash scripts/fuzz.sh "$each"
fi
echo "test stages (normal, sanitizers, oclgrind, rusticl, fuzzing):"
echo "$passed passed, $failed failed"
echo "time: ${times[*]/%/,} total $SECONDS s"
exit $status
