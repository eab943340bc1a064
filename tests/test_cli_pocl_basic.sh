#!/usr/bin/env bash
# PoCL's basic driver runs commands on the host threads that enqueue them,
# and deadlocked (or read back garbage) with two threads driving one device
# at once (issue 27, item 4; runtime/serial.c). `tandem run --threads` on it,
# through the lanes and with the direct policy, by batches and one query a
# call, ends in time with the run of one thread. Skipped (77) where PoCL
# has no basic device. Usage: test_cli_pocl_basic.sh TANDEM.
set -u
T=$1
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"
export POCL_DEVICES=basic TANDEM_DEVICES=pocl
"$T" devices 2>/dev/null | grep -qi 'basic\|cpu-minimal' || { echo "skipped: no PoCL basic device"; exit 77; }

bench_fixture
# the first run compiles the kernels for the basic device (cached for the
# rest): minutes on a loaded 2-core machine, not a hang
CLI_TIMEOUT=600 run "$T" run idx --queries q.txt -o one.txt
want_ok
[ -s one.txt ] || fail "the one-thread run is empty"

for policy in hybrid direct; do
    for batch in 64 1 0; do
        for i in 1 2 3; do
            begin "--threads 4 --policy $policy --batch $batch (try $i)"
            run "$T" run idx --queries q.txt -o four.txt --threads 4 --policy $policy --batch $batch
            want_ok
            cmp -s one.txt four.txt || fail "the run differs from one thread's"
        done
    done
done
# AND step by step launches kernels the runs above did not: PoCL compiles
# each on its first launch (a minute on a 2-core machine with a cold PoCL
# cache), so one thread warms them first, then the 4-thread run's limit is
# the deadlock's
begin "--algorithm and (step by step on a lane, one thread)"
CLI_TIMEOUT=600 run "$T" run idx --queries q.txt -o one-and.txt --algorithm and
want_ok
begin "--threads 4 --algorithm and (step by step on a lane)"
run "$T" run idx --queries q.txt -o four.txt --threads 4 --algorithm and
want_ok
cmp -s one-and.txt four.txt || fail "the run differs from one thread's"
exit $failures
