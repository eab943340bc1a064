#!/usr/bin/env bash
# The `tandem` binary's temporary files (issue 27, items 2 and 3): a link
# planted at the name a command used to pick (OUT.tmp.PID) is never
# followed; an export interrupted by SIGINT, SIGTERM or SIGXFSZ leaves
# nothing; what a SIGKILLed command left is removed by the next command
# into the same path, and nothing else is. Usage: test_cli_temp.sh TANDEM.
# Every case runs; the exit status is the number of failures.
set -u
T=$1
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"
ulimit -c 0 # SIGXFSZ's default action dumps core
no_temp() {
    local left
    left=$(find . -name '*.tmp.*' ! -type l | head -3)
    [ -z "$left" ] || fail "temporary files left: $left"
}
victim_kept() { [ "$(cat victim)" = precious ] || fail "the link's target was overwritten"; }

# ---- fixtures
printf 'd1\thello world\nd2\tboundary layer flow\nd3\tthe flow of air\n' > in.txt
printf '1:flow\n2:hello air\n' > q.txt
echo precious > victim
"$T" build --quiet --format lines -o idx in.txt >/dev/null 2>&1 || { echo "cannot build a fixture index"; exit 1; }

# A command exec'd by a subshell keeps the subshell's PID ($BASHPID): links
# planted at that PID's old temporary names (given as arguments, %P the PID)
# before it starts. Sets rc; out.txt, err.txt as run's.
planted() {
    local names=$1
    shift
    (
        for n in $names; do ln -s "$PWD/victim" "${n//%P/$BASHPID}"; done
        exec "$@"
    ) >out.txt 2>err.txt
    rc=$?
}

begin "build never follows a link at OUT.tmp.PID"
planted "b.idx.tmp.%P" "$T" build --quiet --format lines -o b.idx in.txt
want_ok
victim_kept
cmp -s b.idx idx || fail "b.idx differs from the same build's idx"

begin "export --to ciff never follows a link at OUT.tmp.PID"
planted "x.ciff.tmp.%P" "$T" export --to ciff idx -o x.ciff
want_ok
victim_kept
[ -f x.ciff ] && [ ! -L x.ciff ] || fail "no x.ciff"

begin "export --to pisa never follows links at the five OUT.EXT.tmp.PID"
planted "p.docs.tmp.%P p.freqs.tmp.%P p.sizes.tmp.%P p.terms.tmp.%P p.documents.tmp.%P" \
    "$T" export --to pisa idx -o p
want_ok
victim_kept
for e in docs freqs sizes terms documents; do [ -f "p.$e" ] || fail "no p.$e"; done

begin "import never follows a link at OUT.tmp.PID"
planted "back.idx.tmp.%P" "$T" import --from ciff x.ciff -o back.idx
want_ok
victim_kept
planted "back2.idx.tmp.%P" "$T" import --from pisa p -o back2.idx
want_ok
victim_kept

begin "run never follows (nor stops at) a link at RUN.tmp.PID.0"
planted "r.txt.tmp.%P.0" "$T" run idx --queries q.txt -o r.txt
want_ok
victim_kept
grep -q '^1 Q0 d' r.txt || fail "no run written: $(head -c 300 r.txt)"
find . -type l -name '*.tmp.*' -delete
no_temp

# ---- interrupted exports leave nothing: SIGXFSZ (a file size limit) at once
begin "export interrupted by SIGXFSZ leaves nothing"
"$T" gen collection --docs 3000 --seed 5 --quiet -o big.txt >/dev/null 2>&1 &&
    "$T" build --quiet -o big.idx big.txt >/dev/null 2>&1 || fail "cannot build big.idx"
for to in ciff pisa; do
    (ulimit -f 8 && exec "$T" export --to $to big.idx -o xf) >out.txt 2>err.txt
    rc=$?
    [ "$rc" -eq $((128 + 25)) ] || fail "$to: exit $rc, want 153 (SIGXFSZ): $(head -c 300 err.txt)"
    [ -z "$(find . -name 'xf*')" ] || fail "$to: left $(find . -name 'xf*' | head -3)"
done
no_temp

# SIGINT and SIGTERM while the temporary files exist (job control on, so
# that a background job does not ignore SIGINT).
"$T" gen collection --docs 40000 --seed 6 --quiet -o huge.txt >/dev/null 2>&1 &&
    "$T" build --quiet -o huge.idx huge.txt >/dev/null 2>&1 || fail "cannot build huge.idx"
set -m
for sig in INT TERM; do
    for to in ciff pisa; do
        begin "export --to $to interrupted by SIG$sig leaves nothing"
        caught=0
        for _ in 1 2 3; do # a try that finished before the signal is retried
            "$T" export --to $to huge.idx -o xs >/dev/null 2>&1 &
            pid=$!
            for _ in $(seq 500); do
                compgen -G 'xs*.tmp.*' >/dev/null && break
                sleep 0.005
            done
            kill -$sig $pid 2>/dev/null
            wait $pid
            rc=$?
            rm -f xs xs.*[a-z] 2>/dev/null # a finished export's outputs
            if [ "$rc" -ne 0 ]; then
                caught=1
                [ "$rc" -eq $((128 + $(kill -l $sig))) ] || fail "exit $rc, want the signal's"
                break
            fi
        done
        [ "$caught" = 1 ] || fail "three exports finished before SIG$sig"
        no_temp
    done
done
set +m

# ---- what a SIGKILL leaves: the next command into the path removes it
dead_pid() {
    sh -c 'exit 0' &
    local p=$!
    wait $p
    echo $p
}
begin "the next run, build, import and export remove a dead process's leftovers only"
d=$(dead_pid)
for f in r.txt b.idx back.idx x.ciff p.docs p.documents; do
    : > "$f.tmp.$d.0123456789ab"        # a killed tandem's
    : > "$f.tmp.$d.0"                   # not of tandem's shape: a user's
    : > "$f.tmp.1.0123456789ab"         # a live process's (PID 1)
done
: > b.idx.run3.tmp.$d.zzzzzzzzzzzz      # a killed build's run file
ln -s "$PWD/victim" x.ciff.tmp.$d.link0000link # a link: never removed
run "$T" run idx --queries q.txt -o r.txt
want_ok
run "$T" build --quiet --format lines -o b.idx in.txt
want_ok
run "$T" import --from ciff x.ciff -o back.idx
want_ok
run "$T" export --to ciff idx -o x.ciff
want_ok
run "$T" export --to pisa idx -o p
want_ok
left=$(find . -name "*.tmp.$d.0123456789ab" -o -name "*.run3.tmp.$d.*")
[ -z "$left" ] || fail "leftovers of the dead process stay: $left"
for f in r.txt b.idx back.idx x.ciff p.docs p.documents; do
    [ -f "$f.tmp.$d.0" ] || fail "$f.tmp.$d.0 (not tandem's shape) removed"
    [ -f "$f.tmp.1.0123456789ab" ] || fail "$f.tmp.1.0123456789ab (a live PID) removed"
done
[ -L x.ciff.tmp.$d.link0000link ] || fail "a link was removed"
victim_kept

begin "a SIGKILLed run's leftover is removed by the next run into the path"
seq 1 3000 | sed 's/$/:flow hello air boundary layer/' > many.txt
"$T" run idx --queries many.txt -o k.txt --batch 1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1000); do
    compgen -G 'k.txt.tmp.*' >/dev/null && break
    sleep 0.005
done
kill -KILL $pid 2>/dev/null
wait $pid
rc=$?
[ "$rc" -eq 137 ] || fail "exit $rc, want 137 (SIGKILL)"
[ -n "$(compgen -G "k.txt.tmp.$pid.*")" ] || fail "no leftover after SIGKILL"
run "$T" run idx --queries q.txt -o k.txt
want_ok
[ -z "$(compgen -G 'k.txt.tmp.*')" ] || fail "the next run left $(compgen -G 'k.txt.tmp.*')"

exit $failures
