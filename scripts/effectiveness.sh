#!/usr/bin/env bash
# Effectiveness on Cranfield and CACM (../shared/data), compared with Xapian.
#
#   scripts/effectiveness.sh [cranfield] [cacm]      (both when none is named)
#
# For each collection: index title + text (.T .W; Snowball English, no
# stopwords, pinned: Xapian's settings, not tandem's default), run its queries as OR of their words, BM25 k1 = 1.2, b = 0.75,
# top 1000, on EVERY device of the engine (TANDEM_DEVICES selects them, as for
# any tandem command) with every exact algorithm, each sent three ways (single
# tdm_search_text calls, tdm_search_batch calls of 64 queries, and batches of 9
# from 3 threads at once), check that all those runs are the same bytes
# (documents, order, scores), evaluate each device's with
# `tandem eval`, and check MAP, P@10 and nDCG@10 against Xapian's figures in
# ../shared/data/README.md minus 0.01.
#   Cranfield: queries numbered by position (cranqrel numbers them 1..225 in
#              file order, not by .I); cranqrel grades 1-4 relevant, nDCG gain
#              5 - grade (tandem eval --help).
#   CACM:      qrels.cacm.trec.txt names documents CACM-<n> where cacm.all
#              says <n>: the runs are written with --docname-prefix CACM-.
#              12 of its 64 queries have no judgments: 52 are evaluated.
# Environment: TANDEM_DATA (../shared/data), TANDEM_BUILD_DIR (build; the
# tandem CLI is built there when missing), TANDEM_CLI (the binary itself, over
# TANDEM_BUILD_DIR), TANDEM_EFF_OUT (indexes and runs; $TANDEM_BUILD_DIR/
# effectiveness), TANDEM_EFF_ALGORITHMS ("or auto and_or wand bmw maxscore";
# each device's run of the first one is evaluated), TANDEM_EFF_MODES ("0 64
# 9x3": `tandem run --batch N [--threads T]` for each N or NxT; 0 is single
# calls).
# Exit: 0 every figure reached and every run identical; 1 not (or an error);
# 77 the data is missing (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
data=${TANDEM_DATA:-../shared/data}
build=${TANDEM_BUILD_DIR:-build}
tandem=${TANDEM_CLI:-$build/tandem}
out=${TANDEM_EFF_OUT:-$build/effectiveness}
read -r -a algorithms <<<"${TANDEM_EFF_ALGORITHMS:-or auto and_or wand bmw maxscore}"
read -r -a modes <<<"${TANDEM_EFF_MODES:-0 64 9x3}"
for m in "${modes[@]}"; do
  [[ $m =~ ^[0-9]+(x[0-9]+)?$ ]] || { echo "effectiveness: TANDEM_EFF_MODES: '$m' is not N or NxT" >&2; exit 1; }
done
collections=("$@")
[ ${#collections[@]} -gt 0 ] || collections=(cranfield cacm)

for c in "${collections[@]}"; do
  case $c in cranfield|cacm) ;; *) echo "effectiveness: unknown collection '$c' (cranfield, cacm)" >&2; exit 1;; esac
done
if [ ! -d "$data/cranfield" ] || [ ! -d "$data/cacm" ]; then
  echo "effectiveness: skipped: no Cranfield/CACM under $data (set TANDEM_DATA)"
  exit 77
fi
if [ ! -x "$tandem" ]; then
  echo "effectiveness: building the tandem CLI in $build"
  mkdir -p "$build"
  if ! { cmake -S . -B "$build" && cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
           --target tandem_cli; } >"$build/effectiveness-build.log" 2>&1; then
    cat "$build/effectiveness-build.log" >&2
    echo "effectiveness: the build failed (log above)" >&2
    exit 1
  fi
fi
mkdir -p "$out"

# The engine's devices as "index<TAB>name", from the self-check (which also
# proves each builds and runs a kernel).
check=$("$tandem" selfcheck) || { echo "$check"; echo "effectiveness: selfcheck failed" >&2; exit 1; }
mapfile -t devices < <(sed -n 's/^\([0-9][0-9]*\) \(.*\): ok (.*/\1\t\2/p' <<<"$check")
[ ${#devices[@]} -gt 0 ] || { echo "effectiveness: no device in: $check" >&2; exit 1; }

# collection -> input, queries, qrels, extra run options, Xapian MAP P@10 nDCG@10
spec() {
  case $1 in
    cranfield) input=$data/cranfield/cran.all.1400 queries=$data/cranfield/cran.qry
               qrels=$data/cranfield/cranqrel runopts=(--by-position)
               xapian=(0.300 0.232 0.353) ;;
    cacm)      input=$data/cacm/cacm.all queries=$data/cacm/query.text
               qrels=$data/cacm/qrels.cacm.trec.txt runopts=(--docname-prefix CACM-)
               xapian=(0.310 0.317 0.458) ;;
  esac
}

failed=0
summary=()
for c in "${collections[@]}"; do
  spec "$c"
  idx=$out/$c.tdm
  "$tandem" build --quiet --stemmer english --stopwords none -o "$idx" "$input" >/dev/null
  echo "== $c: $("$tandem" stats "$idx" | sed -n 's/^documents *//p' | head -1) documents, index $idx"
  ref=
  rows=()
  for dev in "${devices[@]}"; do
    d=${dev%%$'\t'*}
    times=()
    first=
    for a in "${algorithms[@]}"; do
      tl=
      for m in "${modes[@]}"; do
        run=$out/$c.dev$d.$a.b$m.run
        mopts=(--batch "${m%x*}")
        [[ $m != *x* ]] || mopts+=(--threads "${m#*x}")
        msg=$("$tandem" run "$idx" --queries "$queries" -o "$run" "${runopts[@]}" --device "$d" \
              --algorithm "$a" --k1 1.2 --b 0.75 -k 1000 --tag tandem "${mopts[@]}" 2>&1) \
          || { echo "$msg" >&2; echo "effectiveness: $c: run failed on device $d ($a, ${mopts[*]})" >&2; exit 1; }
        tl+=${tl:+/}$(sed -n 's/.* queries in \([0-9.]*\) s.*/\1/p' <<<"$msg")
        [ -n "$ref" ] || ref=$run
        [ -n "$first" ] || first=$run
        if ! cmp -s "$ref" "$run"; then
          echo "effectiveness: $c: DIFFERENT RUNS: $run (device $d, $a, ${mopts[*]}) differs from" \
               "$ref in $(diff "$ref" "$run" | grep -c '^>' || true) of $(wc -l <"$ref") lines, e.g.:" >&2
          { diff "$ref" "$run" | head -4 >&2; } || true
          failed=1
        fi
      done
      times+=("$a $tl s")
    done
    printf '   device %s (%s), seconds with --batch %s: %s\n' "$d" "${dev#*$'\t'}" \
      "$(IFS=/; echo "${modes[*]}")" "$(IFS=,; echo "${times[*]}" | sed 's/,/, /g')"
    # Each device's figures (the same everywhere when the runs are).
    "$tandem" eval "$qrels" "$first" >"$out/$c.dev$d.eval" 2>/dev/null
    read -r map p10 ndcg nq < <(awk -F'\t' '$2 == "all" { v[$1] = $3 }
      END { print v["map"], v["P_10"], v["ndcg_cut_10"], v["num_q"] }' "$out/$c.dev$d.eval")
    verdict=$(awk -v m="$map" -v p="$p10" -v n="$ndcg" -v xm="${xapian[0]}" -v xp="${xapian[1]}" \
                -v xn="${xapian[2]}" 'BEGIN {
        bad = ""
        if (m < xm - 0.01) bad = bad " MAP"
        if (p < xp - 0.01) bad = bad " P@10"
        if (n < xn - 0.01) bad = bad " nDCG@10"
        print bad == "" ? "ok" : "BELOW Xapian - 0.01:" bad }')
    [ "$verdict" = ok ] || failed=1
    rows+=("$(printf '   %-8s %7s %7s %9s   %s' "device $d" "$map" "$p10" "$ndcg" "$verdict")")
    [ "$first" != "$ref" ] || { map0=$map; nq0=$nq; }
  done
  printf '   %-8s %7s %7s %9s   (%s judged queries; runs of %s)\n' "" MAP P@10 nDCG@10 "$nq0" \
    "${algorithms[0]}"
  printf '%s\n' "${rows[@]}"
  printf '   %-8s %7s %7s %9s   (Xapian 1.4.22, ../shared/data/README.md)\n' Xapian "${xapian[@]}"
  map=$map0
  summary+=("$c MAP $map (Xapian ${xapian[0]})")
done
n=$(( ${#devices[@]} * ${#algorithms[@]} * ${#modes[@]} ))
if [ "$failed" = 0 ]; then
  echo "effectiveness: passed: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g'); at or above Xapian - 0.01 on MAP, P@10 and nDCG@10; $n runs (${#devices[@]} device(s) x ${#algorithms[@]} algorithm(s) x batch modes ${modes[*]}) identical per collection"
else
  echo "effectiveness: FAILED (see above): $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
  exit 1
fi
