#!/usr/bin/env bash
# The `tandem` binary on hostile command lines (issue 11): outputs that must
# not be destroyed, option values that must be refused with the option named,
# FIFOs that must not hang, stdout errors that must fail the command, and
# messages that must say what happened. Usage: test_cli.sh TANDEM [root]
# ("root": only the cases that need root, e.g. mknod; exit 77 = skipped
# when not root). Every case runs; the exit status is the number of failures.
set -u
T=$1
MODE=${2:-all}
CLI_TIMEOUT=10 # a hang is a failure
. "$(dirname "$0")/cli_lib.sh"
want_same() { cmp -s "$1" "$2" || fail "$1 changed"; }
want_no_temp() {
    local left
    left=$(find . -name '*.tmp.*' | head -3)
    [ -z "$left" ] || fail "temporary files left: $left"
}

# ---- fixtures
printf 'd1\thello world\nd2\tboundary layer flow\nd3\tthe flow of air\n' > in.txt
cp in.txt in.orig
printf 'the\n' > stop.txt
cp stop.txt stop.orig
"$T" build --quiet --format lines -o idx in.txt >/dev/null 2>&1 || { echo "cannot build a fixture index"; exit 1; }
cp idx idx.orig

root_cases() {
    begin "build -o a character device (mknod) is refused and kept"
    mknod nul c 1 3 || { fail "mknod"; return; }
    run "$T" build --quiet -o nul in.txt
    want_fail "character device"
    [ -c nul ] || fail "nul is no longer a device node"
    begin "gen collection -o a character device is refused"
    run "$T" gen collection --docs 3 -o nul
    want_fail "character device"
    [ -c nul ] || fail "nul is no longer a device node"
}

if [ "$MODE" = root ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "skipped: the mknod cases need root"
        exit 77
    fi
    root_cases
    exit $failures
fi

# ---- 1. files destroyed
begin "build -o INPUT"
run "$T" build --quiet -o in.txt in.txt
want_fail "same file as input"
want_same in.txt in.orig

begin "build -o a hard link to an input"
ln in.txt in.link
run "$T" build --quiet -o in.link in.txt
want_fail "same file as input"
want_same in.txt in.orig

begin "build -o FILE - < FILE (standard input is the output)"
timeout 10 "$T" build --quiet -o in.txt - < in.txt >out.txt 2>err.txt; rc=$?
want_fail "same file as input - (standard input)"
want_same in.txt in.orig

begin "build --stopwords FILE -o FILE"
run "$T" build --quiet --stopwords stop.txt -o stop.txt in.txt
want_fail "same file as input stop.txt"
want_same stop.txt stop.orig

begin "build -o a FIFO"
mkfifo fifo
run "$T" build --quiet -o fifo in.txt
want_fail "FIFO"
[ -p fifo ] || fail "fifo replaced"

begin "build -o a directory"
mkdir dir
run "$T" build --quiet -o dir in.txt
want_fail "directory"
[ -d dir ] || fail "dir replaced"

begin "build -o a symlink to /dev/null"
ln -s /dev/null devnull
run "$T" build --quiet -o devnull in.txt
want_fail "character device"
[ -L devnull ] && [ -c /dev/null ] || fail "devnull or /dev/null replaced"

begin "build -o '' fails before reading anything"
run "$T" build --quiet -o "" in.txt
want_fail "empty output path"

begin "build -o - is refused (an index is a file)"
run "$T" build --quiet -o - in.txt
want_fail "cannot go to standard output"
[ ! -e ./- ] || fail "a file named - was written"

begin "import --from ciff X -o X"
"$T" export --to ciff idx -o c.ciff >/dev/null 2>&1 || fail "export fixture"
cp c.ciff c.orig
run "$T" import --from ciff c.ciff -o c.ciff
want_fail "same file as input"
want_same c.ciff c.orig

begin "import --from pisa BASE -o BASE.docs"
"$T" export --to pisa idx -o p >/dev/null 2>&1 || fail "export fixture"
cp p.docs p.orig
run "$T" import --from pisa p -o p.docs
want_fail "same file as input"
want_same p.docs p.orig

begin "import -o -"
run "$T" import --from ciff c.ciff -o -
want_fail "cannot go to standard output"

begin "export -o INDEX"
run "$T" export --to ciff idx -o idx
want_fail "same file as input"
want_same idx idx.orig

begin "export -o - (not a file named -)"
run "$T" export --to ciff idx -o -
want_fail "cannot go to standard output"
[ ! -e ./- ] || fail "a file named - was written"

begin "export --to pisa over a FIFO"
mkfifo q.docs
run "$T" export --to pisa idx -o q
want_fail "FIFO"
[ -p q.docs ] || fail "q.docs replaced"
want_no_temp

begin "gen with an invalid option keeps the output"
cp in.txt keep.txt
run "$T" gen collection --docs 3 --zipf bogus -o keep.txt
want_fail "--zipf"
want_same keep.txt in.orig

begin "gen failing after it started keeps the output"
run "$T" gen collection --docs 3 --vocab-from missing.txt -o keep.txt
want_fail "missing.txt"
want_same keep.txt in.orig
want_no_temp

begin "gen interrupted (SIGTERM) leaves no temporary file and keeps the output"
"$T" gen collection --docs 100M --quiet -o keep.txt 2>/dev/null &
pid=$!
for _ in $(seq 50); do
    [ -n "$(find . -name 'keep.txt.tmp.*')" ] && break
    sleep 0.1
done
[ -n "$(find . -name 'keep.txt.tmp.*')" ] || fail "no temporary file while generating"
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" -eq 143 ] || fail "exit $rc, want 143 (SIGTERM)"
want_same keep.txt in.orig
want_no_temp

begin "gen --vocab-from FILE -o FILE"
run "$T" gen collection --docs 3 --vocab-from keep.txt -o keep.txt
want_fail "same file as input"
want_same keep.txt in.orig

begin "gen lists -o a directory"
run "$T" gen lists --dist uniform --n 10 --universe 100 -o dir
want_fail "directory"

begin "gen lists -o - writes stdout"
run "$T" gen lists --dist uniform --n 10 --universe 100 --format text -o -
want_ok
[ "$(wc -l < out.txt)" -eq 10 ] || fail "want 10 lines on stdout"

begin "bench codecs --csv INDEX is refused before the benchmark"
run "$T" bench codecs --index idx --csv idx
want_fail "same file as input"
want_same idx idx.orig
grep -q "device" out.txt && fail "the benchmark ran"

begin "bench codecs --csv and --plot the same file"
run "$T" bench codecs --csv same.out --plot same.out
want_fail "same file"

begin "bench codecs --plot a FIFO"
run "$T" bench codecs --plot fifo
want_fail "FIFO"

# ---- 5. crashes and hangs
begin "gen --mean-length 1e31 (was an out-of-bounds read)"
run "$T" gen collection --docs 1 --mean-length 1e31 -o g.txt
want_fail "--mean-length"

begin "gen --zipf inf (was a hang)"
run "$T" gen collection --docs 1 --zipf inf -o g.txt
want_fail "--zipf 'inf'"

begin "gen --zipf nan / --sigma nan (were defaults)"
run "$T" gen collection --docs 1 --zipf nan -o g.txt
want_fail "--zipf 'nan'"
run "$T" gen collection --docs 1 --sigma nan -o g.txt
want_fail "--sigma 'nan'"

begin "gen at the edges of the ranges completes"
for z in 0.01 1 10; do
    run "$T" gen collection --docs 20 --zipf $z --mean-length 1000000 --sigma 4 -o g.txt
    want_ok
done
run "$T" gen collection --docs 20 --mean-length 0.001 --vocab 1 -o g.txt
want_ok

begin "stats of a FIFO does not hang"
run "$T" stats fifo
want_fail "not a regular file"

begin "lookup in a FIFO does not hang"
run "$T" lookup fifo word
want_fail "not a regular file"

begin "build --stopwords FIFO, gen --vocab-from FIFO, bench --index FIFO do not hang"
run "$T" build --quiet --stopwords fifo -o x.idx in.txt
want_fail "fifo"
run "$T" gen collection --docs 2 --vocab-from fifo -o g2.txt
want_fail "fifo: not a regular file"
run "$T" bench codecs --index fifo
want_fail "not a regular file"

begin "import of a FIFO does not hang"
run "$T" import --from ciff fifo -o x.idx
want_fail "not a regular file"

begin "a FIFO in the kernel cache does not hang"
mkdir kc
# Filling a fresh cache makes PoCL compile every kernel of kernels.cl to a
# binary: many minutes on a small, busy machine. Past 60 s the case is
# skipped (said below), so that the script stays inside CTest's limit.
TANDEM_CACHE=always TANDEM_CACHE_DIR=$W/kc timeout 60 "$T" selfcheck >out.txt 2>err.txt
sc=$?
if [ "$sc" -eq 0 ]; then
    n=0
    for f in kc/*; do rm -f "$f" && mkfifo "$f" && n=$((n + 1)); done
    [ "$n" -gt 0 ] || fail "selfcheck left no cache entry"
    TANDEM_CACHE=always TANDEM_CACHE_DIR=$W/kc timeout 300 "$T" selfcheck >out.txt 2>err.txt
    rc=$?
    want_ok
elif [ "$sc" -eq 124 ]; then
    echo "note: skipped the kernel-cache FIFO case: filling a fresh kernel cache took over 60 s"
else
    echo "note: selfcheck fails here (no OpenCL device?); the kernel-cache FIFO case did not run"
fi

# ---- 6. values
for c in "--memory -1" "--memory abc" "--memory 1.5" "--memory 17592186044416" \
         "--memory 0" "--k1 inf" "--k1 nan" "--k1 -1" "--b 2" "--b -0.5"; do
    begin "build $c"
    set -- $c
    run "$T" build --quiet $c -o x.idx in.txt
    want_fail "$1 '$2'"
    [ ! -e x.idx ] || fail "x.idx written"
done

for c in "--docs 18446744073709552k" "--docs 0" "--docs -5" "--docs 2^64" "--docs 1x" \
         "--vocab 0" "--mean-length inf" "--mean-length -3" "--sigma 5" "--seed 1.5"; do
    begin "gen collection $c"
    set -- $c
    run "$T" gen collection $c -o g.txt
    want_fail "$1 '$2'"
done

for c in "--n 0" "--universe 2^40" "--n 5k5" "--seed -1"; do
    begin "gen lists $c"
    set -- $c
    run "$T" gen lists --dist uniform --n 10 --universe 100 $c -o l.bin
    want_fail "$1 '$2'"
done

begin "build --tmp that is not a directory, before reading anything"
run "$T" build --quiet --tmp in.txt -o x.idx in.txt
want_fail "--tmp 'in.txt': not a writable directory"
run "$T" build --quiet --tmp nodir -o x.idx in.txt
want_fail "--tmp 'nodir'"

begin "gen lists --n above --universe"
run "$T" gen lists --dist uniform --n 200 --universe 100 -o l.bin
want_fail "exceeds --universe"

begin "gen names an unknown option"
run "$T" gen collection --docs 3 --bogus -o g.txt
want_fail "'--bogus'"
run "$T" gen lists --dist uniform --n 1 --universe 2 --bogus -o l.bin
want_fail "'--bogus'"
run "$T" gen collection --docs 3 --format xml -o g.txt
want_fail "--format 'xml'"

for c in "--select nan" "--select 0" "--select 1.5" "--budget 0" "--budget nan" \
         "--index-lists 0" "--reps 0" "--reps x" "--universe 1" "--e2e-reps 65" "--seed -1"; do
    begin "bench codecs $c"
    set -- $c
    run "$T" bench codecs $c
    want_fail "$1 '$2'"
done

begin "bench codecs --dist zipf before anything runs"
run "$T" bench codecs --dist uniform,zipf
want_fail "unknown 'zipf'"
run "$T" bench codecs --dist ""
want_fail "--dist '': empty"
[ -s out.txt ] && fail "the benchmark printed: $(head -c 200 out.txt)"

begin "bench codecs --codecs '' says why"
run "$T" bench codecs --codecs ""
want_fail "--codecs '': empty"
run "$T" bench codecs --codecs ,
want_fail "no device codec ''"

begin "lookup --limit -1, lookup --bogus"
run "$T" lookup idx flow --limit -1
want_fail "--limit '-1'"
run "$T" lookup idx flow --bogus
want_fail "'--bogus'"

for cmd in "selfcheck --bogus" "devices --bogus" "stats idx --bogus" "import --bogus" \
           "export --bogus" "terms idx --bogus" "version --bogus" "build --bogus"; do
    begin "$cmd is refused"
    run "$T" $cmd
    want_fail "bogus"
done

# ---- 7. output errors
if [ -w /dev/full ]; then
    begin "stats --verify > /dev/full"
    timeout 10 "$T" stats idx --verify > /dev/full 2>err.txt; rc=$?
    want_fail "standard output"
    begin "lookup > /dev/full"
    timeout 10 "$T" lookup idx flow > /dev/full 2>err.txt; rc=$?
    want_fail "standard output"
    begin "terms > /dev/full"
    timeout 10 "$T" terms idx > /dev/full 2>err.txt; rc=$?
    want_fail "standard output"
    begin "devices --json > /dev/full"
    timeout 60 "$T" devices --json --no-probe > /dev/full 2>err.txt; rc=$?
    want_fail "standard output"
    begin "gen lists -o - > /dev/full"
    timeout 10 "$T" gen lists --dist uniform --n 100000 --universe 1000000 -o - > /dev/full 2>err.txt; rc=$?
    want_fail "standard output"
    begin "gen collection -o - > /dev/full"
    timeout 10 "$T" gen collection --docs 100 -o - > /dev/full 2>err.txt; rc=$?
    want_fail "standard output"
else
    echo "note: no /dev/full here; its cases did not run"
fi

begin "stats with stdout closed"
timeout 10 "$T" stats idx >&- 2>err.txt; rc=$?
want_fail "standard output"

begin "gen lists -o FILE with stdout closed writes FILE only"
timeout 10 "$T" gen lists --dist uniform --n 5 --universe 50 --format text -o l.txt >&- 2>err.txt; rc=$?
want_ok
[ "$(wc -l < l.txt)" -eq 5 ] || fail "l.txt does not hold the 5 values alone"

begin "bench codecs --index MISSING before the synthetic part"
run "$T" bench codecs --index missing.idx
want_fail "--index: missing.idx"
[ -s out.txt ] && fail "the benchmark printed: $(head -c 200 out.txt)"

# ---- 8. messages
begin "a word over 64 characters is called that"
run "$T" lookup idx "$(printf 'a%.0s' $(seq 70))"
[ "$rc" -eq 1 ] || fail "exit $rc"
grep -q "over 64 bytes" out.txt || fail "message: $(cat out.txt)"
run "$T" lookup idx "!!"
grep -q "no letters or digits" out.txt || fail "message: $(cat out.txt)"

begin "errors name the user's path, not the temporary file"
run "$T" build --quiet -o nodir/x.idx in.txt
want_fail "nodir/x.idx"
grep -q "\.tmp\." err.txt && fail "names a temp file: $(cat err.txt)"
run "$T" gen collection --docs 2 -o nodir/g.txt
want_fail "nodir/g.txt"
grep -q "\.tmp\." err.txt && fail "names a temp file: $(cat err.txt)"
run "$T" export --to ciff idx -o nodir/c.ciff
want_fail "nodir/c.ciff"
grep -q "\.tmp\." err.txt && fail "names a temp file: $(cat err.txt)"
run "$T" export --to pisa idx -o nodir/p
want_fail "nodir/p"
grep -q "\.tmp\." err.txt && fail "names a temp file: $(cat err.txt)"

begin "no OpenCL driver: says so"
mkdir empty_vendors
OCL_ICD_VENDORS=$W/empty_vendors run "$T" devices --no-probe
grep -q "no .icd file" out.txt || fail "message: $(cat out.txt err.txt)"

begin "PoCL without a cache directory: says so"
if grep -qs pocl /etc/OpenCL/vendors/*.icd && [ "$(ls /etc/OpenCL/vendors/*.icd | wc -l)" = 1 ]; then
    env -u POCL_CACHE_DIR XDG_CACHE_HOME=/proc/tandem-none timeout 60 "$T" devices --no-probe \
        >out.txt 2>err.txt
    grep -q "cache directory /proc/tandem-none" out.txt || fail "message: $(cat out.txt err.txt)"
else
    echo "note: PoCL is not the only OpenCL driver here; its cache-directory case did not run"
fi

# ---- 9. the main job's lookup: a term from the index itself
begin "terms --top 1 gives a term that lookup --exact finds"
run "$T" gen collection --docs 200 --seed 1 -o g.txt
want_ok
"$T" build --quiet -o g.idx g.txt >/dev/null 2>&1 || fail "build g.idx"
term=$("$T" terms g.idx --top 1 | cut -f1)
[ -n "$term" ] || fail "no term"
run "$T" lookup g.idx --exact "$term"
want_ok
grep -q "^term $term" out.txt || fail "lookup: $(cat out.txt)"
run "$T" terms idx --prefix flo
want_ok
[ "$(cut -f1 out.txt)" = flow ] || fail "terms --prefix flo: $(cat out.txt)"
run "$T" terms idx --top 1
[ "$(cut -f1-2 out.txt)" = "$(printf 'flow\t2')" ] || fail "terms --top 1: $(cat out.txt)"

if [ "$failures" -eq 0 ]; then echo "test_cli: all cases passed"; fi
exit $failures
