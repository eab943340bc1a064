#!/usr/bin/env bash
# The main job, on a fresh Debian 12 after scripts/setup.sh: build tandem,
# list the devices and check a kernel on each, turn WordNet 3.0 (the Debian
# package wordnet-base that the set-up installs) into a collection, index and
# verify it, answer a handful of example queries on every device (results,
# per-device times, the same answers everywhere), time queries briefly with
# `tandem bench queries`, evaluate Cranfield against Xapian where
# ../shared/data exists, and time the codecs on every device.
# Needs nothing but what the set-up installs.
# Environment: TANDEM_BUILD_DIR (build), TANDEM_DATA (../shared/data),
# TANDEM_WORDNET (/usr/share/wordnet), TANDEM_DEVICES (as for any tandem
# command).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TANDEM_BUILD_DIR:-build}
data=${TANDEM_DATA:-../shared/data}
wordnet=${TANDEM_WORDNET:-/usr/share/wordnet}
tandem=$build/tandem
done_list=()

# Quiet build: the log is printed only when it fails.
echo "== build tandem in $build (log: $build/main-build.log)"
mkdir -p "$build"
blog=$build/main-build.log
if [ -z "${TANDEM_BUILD_DIR:-}" ]; then
  config=(cmake --preset default -DTANDEM_BUILD_TESTS=OFF)
else
  config=(cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_BUILD_TESTS=OFF)
fi
if ! { "${config[@]}" && cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
         --target tandem_cli; } >"$blog" 2>&1; then
  cat "$blog" >&2
  echo "main: the build failed (log above)" >&2
  exit 1
fi

echo "== devices"; "$tandem" devices
echo "== selfcheck"
check=$("$tandem" selfcheck) || { echo "$check"; echo "main: selfcheck failed" >&2; exit 1; }
echo "$check"
# The engine's devices: "index<TAB>name" from the self-check's report.
mapfile -t devices < <(sed -n 's/^\([0-9][0-9]*\) \(.*\): ok (.*/\1\t\2/p' <<<"$check")
done_list+=("${#devices[@]} device(s) checked")

echo "== WordNet 3.0 ($wordnet, Debian package wordnet-base) to a collection"
coll=$build/wordnet.txt
bash scripts/wordnet-collection.sh "$wordnet" >"$coll.tmp" && mv "$coll.tmp" "$coll"
echo "$(wc -l <"$coll") synsets, $(wc -c <"$coll") bytes: $coll"
echo "== index $coll"
idx=$build/wordnet.tdm
"$tandem" build --quiet -o "$idx" "$coll"
"$tandem" stats "$idx" --verify | sed -n '1,5p;/^verify/p'
ndocs=$("$tandem" stats "$idx" | sed -n 's/^documents *//p')
done_list+=("WordNet indexed ($ndocs synsets) and verified")

echo "== example queries: top 3, then every device's answer and time (tandem search --device D)"
# One untimed query a device first: a device's first search builds (or loads
# from the cache) its kernels, seconds on PoCL, which is no query's time.
for dev in "${devices[@]}"; do
  "$tandem" search "$idx" "warm up" -k 1 --device "${dev%%$'\t'*}" >/dev/null 2>&1 || true
done
mismatch=0
queries=("boundary layer" "speed of light" "greek goddess of wisdom"
         "musical instrument with strings" "programming language" "volcanic eruption")
for q in "${queries[@]}"; do
  echo "\"$q\""
  first=
  for dev in "${devices[@]}"; do
    d=${dev%%$'\t'*}
    hits=$("$tandem" search "$idx" "$q" -k 10 --device "$d" 2>"$build/search.err") \
      || { cat "$build/search.err" >&2; echo "main: search failed on device $d" >&2; exit 1; }
    if [ -z "$first" ]; then
      first=$hits
      head -3 <<<"$hits" | awk -F'\t' '{ printf "   %s  %9.4f  %s\n", $1, $2, $3 }'
    elif [ "$hits" != "$first" ]; then
      echo "main: device $d answered \"$q\" differently from device ${devices[0]%%$'\t'*}:" >&2
      { diff <(echo "$first") <(echo "$hits") | head -6 >&2; } || true
      mismatch=$((mismatch + 1))
    fi
    # "10 results; maxscore on device 0 (name), 1.234 ms"
    sed -n 's/^[0-9]* results; \([a-z_]*\) on device \([0-9]*\) (\(.*\)), \([0-9.]*\) ms.*/   device \2 (\3): \4 ms (\1)/p' \
      "$build/search.err"
  done
done
if [ "$mismatch" = 0 ]; then
  done_list+=("${#queries[@]} example queries answered alike on ${#devices[@]} device(s)")
else
  done_list+=("FAILED: $mismatch answer(s) differed between devices")
fi

echo "== tandem bench queries (brief)"
if "$tandem" bench queries --help >/dev/null 2>&1; then
  # A query log from the collection itself: the words of every 100th synset.
  qlog=$build/wordnet-queries.txt
  awk -F'\t' 'NR % 100 == 0 { t = $2; sub(/:.*/, "", t); gsub(/,/, "", t); print NR ":" t }' \
    "$coll" >"$qlog"
  # It checks every answer against the host oracle: a mismatch fails the job, at its end.
  if "$tandem" bench queries "$idx" --queries "$qlog" --limit 300 --algorithms or,auto \
       -k 10,1000 --warmup 20; then
    done_list+=("bench queries run, every answer the oracle's")
  else
    done_list+=("FAILED: bench queries (answers differ from the oracle, or an error)")
  fi
else
  echo "note: this tandem has no 'bench queries' yet; step skipped"
  done_list+=("bench queries skipped (not in this tandem)")
fi

if [ -d "$data/cranfield" ]; then
  echo "== effectiveness: Cranfield against Xapian (scripts/effectiveness.sh)"
  if eff=$(TANDEM_BUILD_DIR=$build TANDEM_DATA=$data bash scripts/effectiveness.sh cranfield); then
    echo "$eff"
    done_list+=("$(sed -n 's/^effectiveness: passed: cranfield \(MAP [0-9.]* (Xapian [0-9.]*)\).*/Cranfield \1/p' <<<"$eff")")
  else
    echo "$eff"
    done_list+=("FAILED: Cranfield check, see above ($(sed -n 's/^effectiveness: FAILED (see above): cranfield //p' <<<"$eff"))")
  fi
else
  echo "== effectiveness: skipped ($data/cranfield is missing; TANDEM_DATA names another place)"
  done_list+=("Cranfield skipped (no $data)")
fi

echo "== codecs: bits per integer and decode speed on every device"
"$tandem" bench codecs --sizes 16,20 --dist uniform --reps 10 --budget 0.5 --csv "$build/codecs.csv"
done_list+=("codecs timed")

summary=$(IFS=';'; echo "${done_list[*]}" | sed 's/;/; /g')
if grep -q FAILED <<<"$summary"; then
  echo "main: FAILED: $summary"
  exit 1
fi
echo "main: done: $summary"
