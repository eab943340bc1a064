#!/usr/bin/env bash
# The settings' code, table, docs and --help-env in step (docs/SETTINGS.md):
# only runtime/settings.c reads the environment; every TANDEM_* name in a
# string of host/ is in settings.c's table; `tandem --help-env` and
# docs/SETTINGS.md list each table entry exactly once and nothing else;
# `tandem --help` stays short. Usage: test_settings_doc.sh SOURCE_DIR TANDEM.
SRC=$1 T=$2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cd "$SRC" || exit 1
others=$(grep -rln 'getenv' host | grep -v '^host/runtime/settings\.c$')
[ -z "$others" ] || fail "getenv outside host/runtime/settings.c: $others"

help_env=$("$T" --help-env) || fail "tandem --help-env exit $?"
# the table's names: the help's variable lines, in order
table=$(printf '%s\n' "$help_env" | sed -n 's/^  \(TANDEM_[A-Z0-9_]*\)$/\1/p')
[ "$(printf '%s\n' "$table" | wc -l)" -ge 30 ] || fail "--help-env lists too few: $table"
dups=$(printf '%s\n' "$table" | sort | uniq -d)
[ -z "$dups" ] || fail "--help-env lists twice: $dups"

# every TANDEM_* name the library reads (a string in host/) is documented
read_names=$(grep -rhoE '"TANDEM_[A-Z0-9_]+"' host | tr -d '"' | sort -u)
for v in $read_names; do
    printf '%s\n' "$table" | grep -qx "$v" || fail "$v is read in host/ but not in settings.c's table"
done
# and every documented one is read by settings.c (named there besides its
# table entry)
for v in $table; do
    [ "$(grep -c "\"$v\"" host/runtime/settings.c)" -ge 2 ] ||
        fail "$v is in the table but settings.c does not read it"
done

# docs/SETTINGS.md: one row per variable, none other
doc_rows=$(sed -n 's/^| `\(TANDEM_[A-Z0-9_]*\)` |.*/\1/p' docs/SETTINGS.md)
for v in $table; do
    n=$(printf '%s\n' "$doc_rows" | grep -cx "$v")
    [ "$n" -eq 1 ] || fail "docs/SETTINGS.md has $n rows for $v (want 1)"
done
for v in $doc_rows; do
    printf '%s\n' "$table" | grep -qx "$v" || fail "docs/SETTINGS.md documents $v, which the code does not read"
done

# the main help: short, pointing at --help-env, no tuning switch
help=$("$T" --help) || fail "tandem --help exit $?"
[ "$(printf '%s\n' "$help" | wc -l)" -le 40 ] || fail "tandem --help is $(printf '%s\n' "$help" | wc -l) lines"
printf '%s\n' "$help" | grep -q -- '--help-env' || fail "tandem --help does not mention --help-env"
for v in TANDEM_SEED TANDEM_BATCH_QUEUE TANDEM_STAGING TANDEM_DECODE_VARIANT; do
    printf '%s\n' "$help" | grep -q "$v" && fail "tandem --help lists the tuning switch $v"
done
"$T" --help-env extra >/dev/null 2>&1 && fail "--help-env took an argument"

[ "$failures" -eq 0 ] && echo "settings docs: all in step" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
