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

# The benchmark tests' fixture: q.txt, a query log in PISA's id:text form,
# and idx, an index of a collection drawing its vocabulary from it (so the
# queries hit long and short lists alike), with idx.orig a copy. Exits the
# test when the index cannot be built.
bench_fixture() {
    cat > q.txt <<'EOF'
1:boundary layer flow
2:heat transfer in a flat plate
3:flow
4:supersonic flow over a cone
5:laminar boundary layer heat
6:plate
7:pressure distribution on a wing
8:wing flow pressure heat plate cone
9:transfer
10:turbulent mixing layer
11:shock wave boundary layer interaction
EOF
    "$T" gen collection --docs 3000 --seed 7 --vocab-from q.txt --quiet -o c.txt >/dev/null 2>&1 &&
        "$T" build --quiet --stemmer none -o idx c.txt >/dev/null 2>&1 ||
        { echo "cannot build a fixture index"; exit 1; }
    cp idx idx.orig
}
