#!/usr/bin/env bash
# One exit-status rule for every command (issue 27 item 7; `tandem --help`,
# README): 2 for a usage error (an unknown option, a missing or extra
# argument, a value an option does not take), 1 for a failure (a missing
# file, a malformed input), 0 for success. Every subcommand is tried both
# ways. Usage: test_cli_exit.sh TANDEM [TANDEM-MPI MPIEXEC] (tandem-mpi's
# cases run where it was built). The exit status is the number of failures.
set -u
T=$1 M=${2:-none} MPIEXEC=${3:-mpirun}
# Under ASan, MPI processes run without leak detection (memory errors and
# UBSan still checked): Open MPI's own allocations at exit are made in plugins
# without frame pointers, whose stacks no suppression can name.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"
# The exit status is `want`: "CASE" WANT COMMAND...
want_rc() {
    local want=$1
    shift
    begin "$*"
    run "$@"
    [ "$rc" -eq "$want" ] || fail "exit $rc, want $want: $(head -c 300 err.txt)"
    [ "$rc" -eq 0 ] || [ -s err.txt ] || [ -s out.txt ] || fail "exit $rc without a message"
}

printf 'd1\thello world\nd2\tboundary layer flow\nd3\tthe flow of air\n' > in.txt
printf '1:flow\n2:air\n' > q.txt
printf '1 0 d2 1\n2 0 d3 1\n' > qrels.txt
printf '1 Q0 d2 1 1.0 t\n2 Q0 d3 1 1.0 t\n' > r.run
"$T" build --quiet -o idx in.txt >/dev/null 2>&1 || { echo "cannot build a fixture index"; exit 1; }

# ---- 2: usage errors, every subcommand
want_rc 2 "$T"
want_rc 2 "$T" nosuchcommand
want_rc 2 "$T" version extra
want_rc 2 "$T" --help-env extra
want_rc 2 "$T" devices --bogus
want_rc 2 "$T" selfcheck extra
want_rc 2 "$T" build --bogus -o x in.txt
want_rc 2 "$T" build in.txt                         # no -o
want_rc 2 "$T" build -o x                           # no INPUT
want_rc 2 "$T" build --memory 0 -o x in.txt
want_rc 2 "$T" build --format nope -o x in.txt
want_rc 2 "$T" build --codec nope -o x in.txt       # refused by the library
want_rc 2 "$T" build --stemmer nope -o x in.txt
want_rc 2 "$T" build -o '' in.txt
want_rc 2 "$T" stats
want_rc 2 "$T" stats idx extra
want_rc 2 "$T" shard idx -o s                       # no --shards
want_rc 2 "$T" shard idx --shards 0 -o s
want_rc 2 "$T" lookup idx
want_rc 2 "$T" lookup idx flow --limit -1
want_rc 2 "$T" lookup idx 'boundary layer'          # two words
want_rc 2 "$T" terms
want_rc 2 "$T" terms idx --top 0
want_rc 2 "$T" terms idx --top 3 --prefix f
want_rc 2 "$T" bench
want_rc 2 "$T" bench codecs --reps 0
want_rc 2 "$T" bench codecs --dist nope
want_rc 2 "$T" bench codecs --codecs nope
want_rc 2 "$T" bench queries idx                    # no --queries
want_rc 2 "$T" bench queries idx --queries q.txt -k 0
want_rc 2 "$T" bench load idx --queries q.txt       # no --rates or --find-max
want_rc 2 "$T" bench load idx --queries q.txt --rates x
want_rc 2 "$T" import --from ciff in.ciff           # no -o
want_rc 2 "$T" import --from nope in.ciff -o x
want_rc 2 "$T" import --from ciff in.ciff -o x --k1 nan
want_rc 2 "$T" export idx -o x.ciff                 # no --to
want_rc 2 "$T" export --to ciff idx -o x.ciff extra
want_rc 2 "$T" gen
want_rc 2 "$T" gen collection -o c.txt              # no --docs
want_rc 2 "$T" gen collection --docs 0 -o c.txt
want_rc 2 "$T" gen lists --dist nope --n 5 --universe 50 -o l.bin
want_rc 2 "$T" gen lists --dist uniform --n 50 --universe 5 -o l.bin
want_rc 2 "$T" search idx
want_rc 2 "$T" search idx flow -k 0
want_rc 2 "$T" search idx flow --algorithm nope
want_rc 2 "$T" search idx flow extra
want_rc 2 "$T" run idx --queries q.txt              # no -o
want_rc 2 "$T" run idx --queries q.txt -o r --tag ''
want_rc 2 "$T" run idx --queries q.txt -o r --batch x
want_rc 2 "$T" eval qrels.txt                       # no RUN
want_rc 2 "$T" eval qrels.txt r.run --gain nope
want_rc 2 "$T" eval qrels.txt r.run -m nope
if "$T" serve --help 2>&1 | grep -q "not built"; then
    echo "serve: not built (no libmicrohttpd): its cases skipped"
else
    want_rc 2 "$T" serve
    want_rc 2 "$T" serve idx --max-k 0
    want_rc 2 "$T" serve idx --listen nonsense
    want_rc 2 "$T" serve idx -k 50 --max-k 10
fi

# ---- 1: failures, every subcommand (a missing file where it reads one)
want_rc 1 "$T" build -o x missing.txt
want_rc 1 "$T" build -o nodir/x in.txt
want_rc 1 "$T" build --tmp missing.d -o x in.txt
want_rc 1 "$T" stats missing.idx
want_rc 1 "$T" stats in.txt                         # not an index
want_rc 1 "$T" shard missing.idx --shards 2 -o s
want_rc 1 "$T" lookup missing.idx flow
want_rc 1 "$T" lookup idx zebra                     # not in the index
want_rc 1 "$T" terms missing.idx
want_rc 1 "$T" bench codecs --index missing.idx
want_rc 1 "$T" bench queries missing.idx --queries q.txt
want_rc 1 "$T" bench queries idx --queries missing.txt
want_rc 1 "$T" bench load missing.idx --queries q.txt --rates 1
want_rc 1 "$T" import --from ciff missing.ciff -o x
want_rc 1 "$T" import --from pisa missing -o x
want_rc 1 "$T" export --to ciff missing.idx -o x.ciff
want_rc 1 "$T" export --to ciff idx -o idx          # the output is the input
want_rc 1 "$T" gen collection --docs 3 --vocab-from missing.txt -o c.txt
want_rc 1 "$T" gen lists --dist uniform --n 5 --universe 50 -o nodir/l.bin
want_rc 1 "$T" search missing.idx flow
want_rc 1 "$T" run missing.idx --queries q.txt -o r
want_rc 1 "$T" run idx --queries missing.txt -o r
want_rc 1 "$T" eval missing.txt r.run
want_rc 1 "$T" eval qrels.txt missing.run
TANDEM_DEVICES=no-such-device want_rc 1 "$T" selfcheck
if ! "$T" serve --help 2>&1 | grep -q "not built"; then
    want_rc 1 "$T" serve missing.idx --listen 127.0.0.1:0 --drain 0
fi

# ---- 0: the same commands, right
want_rc 0 "$T" version
want_rc 0 "$T" stats idx
want_rc 0 "$T" lookup idx flow
want_rc 0 "$T" eval qrels.txt r.run
want_rc 0 "$T" gen lists --dist uniform --n 5 --universe 50 -o l.bin

# ---- tandem-mpi, where it was built: the same rule
if [ "$M" != none ] && [ -x "$M" ] && command -v "$MPIEXEC" >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
    "$T" shard idx --shards 2 -o s >/dev/null 2>&1 || fail "cannot shard the fixture"
    want_rc 2 "$MPIEXEC" -np 1 "$M" --bogus
    want_rc 2 "$MPIEXEC" -np 1 "$M" run s --queries q.txt   # no -o
    want_rc 2 "$MPIEXEC" -np 1 "$M" run s --queries q.txt -o r -k 0
    want_rc 1 "$MPIEXEC" -np 1 "$M" run missing --queries q.txt -o r
else
    echo "tandem-mpi: not built: its cases skipped"
fi
exit $failures
