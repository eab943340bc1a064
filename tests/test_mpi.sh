#!/usr/bin/env bash
# tandem-mpi (issue 33 items 2, 3, 5): shards searched by MPI ranks on this
# machine (mpirun --oversubscribe, PoCL devices), answers identical to the
# unsharded index: `tandem-mpi run` writes `tandem run`'s bytes with 2 and 3
# ranks over 3 shards (several shards a rank), every algorithm; `bench
# queries` finds every answer the oracle's (its oracle on one thread and on
# two, --oracle-threads); shards of two splits, a missing shard and too
# many ranks are refused before any query; a rank that fails,
# hangs or is killed mid-run ends the job with an error, never a hang (each
# command bounded by a timeout) and never a RUN. Usage: test_mpi.sh TANDEM
# TANDEM_MPI|none MPIEXEC. Exit 77 (skipped) without MPI.
set -u
T=$1 M=$2 MPIEXEC=${3:-mpirun}
if [ "$M" = none ] || [ ! -x "$M" ] || ! command -v "$MPIEXEC" >/dev/null; then
    echo "skipped: tandem-mpi not built (no MPI found: apt-get install libopenmpi-dev openmpi-bin)"
    exit 77
fi
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"
# Open MPI as root, in containers (no cross-memory attach), on 2 cores
# Under ASan, MPI processes run without leak detection (memory errors and
# UBSan still checked): Open MPI's own allocations at exit are made in plugins
# without frame pointers, whose stacks no suppression can name.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { local np=$1; shift; run "$MPIEXEC" --oversubscribe -np "$np" "$M" "$@"; }

bench_fixture
# more queries: words of the collection's documents, 1 to 4 a query
awk -F'\t' 'NR % 25 == 0 { n = split($2, w, " "); m = NR % 4 + 1; q = "";
     for (i = 1; i <= m && i <= n; i++) q = q " " w[i * 3 % n + 1];
     print "d" NR ":" q }' c.txt >> q.txt
"$T" shard idx --shards 3 -o s >/dev/null 2>&1 && "$T" shard idx --shards 2 -o two >/dev/null 2>&1 ||
    { echo "cannot shard the fixture index"; exit 1; }

for np in 2 3; do
    for alg in auto and and_or bmw; do
        begin "run: $np ranks, 3 shards, $alg: tandem run's bytes"
        "$T" run idx --queries q.txt -k 50 --algorithm "$alg" -o whole.run >/dev/null 2>&1 ||
            fail "tandem run failed"
        mpi "$np" run s --queries q.txt -k 50 --algorithm "$alg" --batch 7 -o mpi.run
        want_ok
        cmp -s whole.run mpi.run || fail "runs differ: $(cmp whole.run mpi.run 2>&1)"
    done
done

begin "run -o -: to stdout on rank 0 only"
"$T" run idx --queries q.txt -o whole.run >/dev/null 2>&1
mpi 2 run s --queries q.txt -o -
want_ok
cmp -s whole.run out.txt || fail "stdout differs from tandem run's"

begin "bench queries: every algorithm, every answer the oracle's"
mpi 3 bench queries s --queries q.txt --oracle idx --algorithms or,and,and_or,wand,bmw,maxscore \
    -k 10 --batch 8
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -5 err.txt)"
[ "$(grep -cE '^(or|and|and_or|wand|bmw|maxscore) ' out.txt)" -eq 6 ] || fail "$(cat out.txt)"

begin "bench queries --oracle-threads 2: the same check, the oracle on two threads"
mpi 2 bench queries s --queries q.txt --oracle idx --algorithms and_or,maxscore -k 10 \
    --batch 8 --oracle-threads 2
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -5 err.txt)"
grep -q "on 2 threads" err.txt || fail "the oracle did not say 2 threads: $(tail -5 err.txt)"
begin "bench queries --oracle-threads 0: a usage error (exit 2)"
mpi 2 bench queries s --queries q.txt --oracle idx --oracle-threads 0
[ "$rc" -eq 2 ] || fail "exit $rc, want 2: $(tail -3 err.txt)"
grep -q -- "--oracle-threads" err.txt || fail "stderr does not name the option: $(tail -3 err.txt)"
begin "--rank-timeout 0: a usage error (exit 2)"
mpi 2 bench queries s --queries q.txt --oracle idx --rank-timeout 0
[ "$rc" -eq 2 ] || fail "exit $rc, want 2: $(tail -3 err.txt)"
grep -q -- "--rank-timeout" err.txt || fail "stderr does not name the option: $(tail -3 err.txt)"

begin "bench queries: a wrong oracle index is caught"
head -n 2000 c.txt > c2.txt && "$T" build --quiet --stemmer none -o other c2.txt >/dev/null 2>&1
mpi 2 bench queries s --queries q.txt --oracle other -k 10
want_fail "answers differ from the oracle's"

mkdir -p mix miss
cp s.0 mix/s.0 && cp two.1 mix/s.1 && cp s.2 mix/s.2
cp s.0 miss/s.0 && cp s.1 miss/s.1
begin "shards of two splits: refused before any query"
mpi 3 run mix/s --queries q.txt -o mix.run
want_fail "mix/s.1 (rank 1): shard 1 of 2 of split .*: shards of two splits"
[ ! -e mix.run ] || fail "a run was written"
begin "a missing shard: refused, naming the file"
mpi 2 run miss/s --queries q.txt -o miss.run
want_fail "miss/s.2"
[ ! -e miss.run ] || fail "a run was written"
begin "more ranks than shards: refused"
mpi 4 run s --queries q.txt -o x.run
want_fail "4 ranks for 3 shards"
begin "a whole index where shards are expected"
cp idx whole.0 && cp idx whole.1
mpi 2 run whole --queries q.txt -o x.run
want_fail "a whole index, not a shard"

begin "a rank that fails mid-run: an error naming its shard, no RUN"
mpi 3 run s --queries q.txt -o f.run --batch 4 --test-fault 1:fail@2
want_fail "rank 1 failed: s.1: failure injected"
[ ! -e f.run ] || fail "a run was written"
begin "a rank that hangs: rank 0 gives up after --timeout, naming it"
mpi 3 run s --queries q.txt -o h.run --batch 4 --timeout 3 --test-fault 2:hang@2
want_fail "rank 2 did not answer within 3 s"
[ ! -e h.run ] || fail "a run was written"
begin "a rank killed mid-run: the job ends with an error, not a hang"
mpi 3 run s --queries q.txt -o k.run --batch 4 --test-fault 1:kill@2
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "exit $rc"
grep -q "rank 1" err.txt || fail "no word of rank 1: $(tail -5 err.txt)"
[ ! -e k.run ] || fail "a run was written"
ls | grep -q '\.tmp\.' && fail "temporary files left: $(ls)"

echo "$failures failure(s)"
exit "$failures"
