# Shared by the shell tests of the `tandem` binary (sourced, not run): a
# scratch directory removed on exit, and the case helpers. Set CLI_TIMEOUT
# (seconds a command may run: past it is a failure) before sourcing.
mkdir -p "${TANDEM_TEST_TMP:-/tmp}" || exit 1
W=$(mktemp -d "${TANDEM_TEST_TMP:-/tmp}/$(basename "$0" .sh).XXXXXX") || exit 1
cd "$W" || exit 1
trap 'cd / && rm -rf "$W"' EXIT
failures=0
name=

begin() { name=$1; }
fail() { echo "FAIL: $name: $*"; failures=$((failures + 1)); }
# Runs a command, keeping rc, out.txt and err.txt.
run() { timeout "${CLI_TIMEOUT:-10}" "$@" >out.txt 2>err.txt; rc=$?; }
# The command failed cleanly (not a crash, a signal or a timeout) with PATTERN on stderr.
want_fail() {
    if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; then fail "exit $rc, want 1..123"; fi
    grep -q -- "$1" err.txt || fail "stderr lacks '$1': $(head -c 400 err.txt)"
}
want_ok() { [ "$rc" -eq 0 ] || fail "exit $rc: $(head -c 600 err.txt)"; }
