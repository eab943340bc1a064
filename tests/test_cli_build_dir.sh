#!/usr/bin/env bash
# `tandem build -o INDEX DIR` (issue 27 item 7): a directory stands for every
# regular file under it, as Anserini's `-input DIR` (host/build/inputs.h):
# recursively, in byte order of the paths, hidden names skipped, gzip by
# content, a file reached by two links read once; an empty directory, an
# unreadable file or directory, a dangling link, a loop of links and an
# output inside the directory are errors naming the path. Usage:
# test_cli_build_dir.sh TANDEM. The exit status is the number of failures.
set -u
T=$1
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"
# The documents of an index in docid order (lookup of a word every one holds).
names() { "$T" lookup "$1" every --limit 0 | awk 'f { print $3 } /^docid/ { f = 1 }' | tr '\n' ' '; }

mkdir -p c/sub/deeper c/.hidden
printf 'b1\tevery word here\n' > c/b.txt
printf 'a1\tevery flow\na2\tevery layer\n' | gzip > c/a.data   # gzip, no .gz name
printf 's1\tevery air\n' > c/sub/s.txt
printf 'z1\tevery plate\n' > c/sub/deeper/z.txt
printf 'h1\tevery secret\n' > c/.hidden/h.txt
printf 'h2\tevery secret\n' > c/.dot.txt
ln -s b.txt c/zz-link.txt          # the same file again: read once
mkfifo c/fifo                      # neither file nor directory: skipped, no hang

begin "a directory: every file under it, sorted, hidden names skipped"
run "$T" build --quiet -o d.idx c
want_ok
cat c/a.data | gunzip > a.txt
"$T" build --quiet -o f.idx a.txt c/b.txt c/sub/deeper/z.txt c/sub/s.txt >/dev/null 2>&1 ||
    fail "cannot build from the files"
[ "$("$T" stats d.idx | awk '/^documents/ { print $2 }')" = 5 ] ||
    fail "documents: $("$T" stats d.idx | grep ^documents)"
got=$(names d.idx) want=$(names f.idx)
[ "$got" = "$want" ] || fail "docids: '$got', want '$want' (the files in path order)"
for q in 'every flow' 'plate' 'air layer'; do
    "$T" search d.idx "$q" -k 10 2>/dev/null > d.out
    "$T" search f.idx "$q" -k 10 2>/dev/null > f.out
    cmp -s d.out f.out || fail "search '$q' differs from the files' index"
done
"$T" search d.idx secret 2>/dev/null | grep -q . && fail "a hidden file was read"

begin "a directory beside files, in command-line order"
run "$T" build --quiet -o m.idx a.txt c/sub
want_ok
[ "$(names m.idx)" = "a1 a2 z1 s1 " ] || fail "docids: '$(names m.idx)'"

begin "an empty directory (hidden files only) is an error naming it"
mkdir -p empty/.git && printf 'x\ty\n' > empty/.git/x
run "$T" build --quiet -o e.idx empty
want_fail "empty: a directory with no file to read"
[ "$rc" -eq 1 ] || fail "exit $rc, want 1"
[ -e e.idx ] && fail "e.idx written"

begin "a loop of symbolic links is an error naming the link"
ln -s .. c/sub/up
run "$T" build --quiet -o l.idx c
want_fail "c/sub/up: a symbolic link back to c"
rm c/sub/up
ln -s self c/self
run "$T" build --quiet -o l.idx c
want_fail "c/self: a loop of symbolic links"
rm c/self

begin "a dangling link is an error naming it"
ln -s nowhere c/dangling
run "$T" build --quiet -o l.idx c
want_fail "c/dangling: a symbolic link to nothing"
rm c/dangling

begin "the output inside the input directory is refused"
run "$T" build --quiet -o c/sub/x.idx c
want_fail "lies in the input directory c"
[ "$rc" -eq 2 ] || fail "exit $rc, want 2 (a usage error)"
[ -e c/sub/x.idx ] && fail "c/sub/x.idx written"

if [ "$(id -u)" != 0 ]; then # root reads every file
    begin "an unreadable file is an error before the build starts"
    printf 'u\tevery\n' > c/unreadable.txt && chmod 000 c/unreadable.txt
    run "$T" build --quiet -o u.idx c
    want_fail "c/unreadable.txt: cannot read it"
    rm -f c/unreadable.txt
    begin "an unreadable directory is an error naming it"
    mkdir c/closed && chmod 000 c/closed
    run "$T" build --quiet -o u.idx c
    want_fail "c/closed: cannot read the directory"
    chmod 755 c/closed && rmdir c/closed
else
    echo "as root: the unreadable-file cases skipped"
fi
exit $failures
