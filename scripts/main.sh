#!/usr/bin/env bash
# The main job: build tandem, list the devices, check a kernel on each, index
# the default data set (Cranfield, from ../shared/data; a generated collection
# where that is absent), verify and query its lexicon, and time the codecs on
# every device. Works on a fresh clone with no ../shared.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default -DTANDEM_BUILD_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" --target tandem_cli
tandem=./build/tandem
echo "== devices"; $tandem devices
echo "== selfcheck"; $tandem selfcheck
data=../shared/data/cranfield/cran.all.1400
if [ ! -r "$data" ]; then
  echo "== $data is missing: generating a 20,000-document collection instead"
  data=build/generated.txt
  $tandem gen collection --docs 20000 --seed 1 -o "$data"
fi
echo "== index $data"
$tandem build -o build/default.tdm "$data"
$tandem stats build/default.tdm --verify
# A term the index holds, taken from the index itself (the generated
# collection has no 'boundary'): the one with the longest list, as stored.
term=$($tandem terms build/default.tdm --top 1 | cut -f1)
if [ -z "$term" ]; then echo "main: build/default.tdm has no terms" >&2; exit 1; fi
echo "== lookup $term (the term with the most documents)"
$tandem lookup build/default.tdm --exact "$term"
echo "== codecs: bits per integer and decode speed on every device"
$tandem bench codecs --sizes 16,20 --dist uniform --reps 10 --budget 0.5 --csv build/codecs.csv
