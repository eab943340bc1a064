#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time. Usage: scripts/fuzz.sh [SECONDS per target, default 60] [target...]
# Seeds: small valid indexes built from the real data when it is there, plus
# whatever earlier runs left in build-fuzz/corpus/<target>. A crash leaves its
# input as build-fuzz/crash-* and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
dir=build-fuzz
jobs=$(nproc 2>/dev/null || echo 2)
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTANDEM_BUILD_FUZZERS=ON -DTANDEM_BUILD_TESTS=OFF "-DCMAKE_C_FLAGS=$san" >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^tandem_fuzzer(\([a-z0-9_]*\).*/\1/p' fuzz/CMakeLists.txt)
fi
cmake --build "$dir" -j "$jobs" --target tandem_cli "${targets[@]}"
data=../shared/data
status=0
for t in "${targets[@]}"; do
  corpus="$dir/corpus/$t"
  mkdir -p "$corpus"
  # Seed the index reader with small format-3 indexes, one per codec: one-block
  # lists and a list of 1100 postings (several blocks for every block size);
  # and an impact index (its quantizer in the header). Corpora from before
  # keep their format-2 seeds (v2-*), which the reader still reads.
  if [ "$t" = fuzz_index_reader ] || [ "$t" = fuzz_search ]; then
    { printf 'd1\tboundary layer flow\nd2\tflow of heat\nd3\tlayer\n'
      for i in $(seq 4 1100); do printf 'd%d\tlayer w%d\n' "$i" $((i % 7)); done; } > "$dir/seed.txt"
    for codec in raw bp128 bp256 vbyte128 vbyte1024 pef pfor newpfd128 newpfd64 rice; do
      [ -f "$corpus/v3-$codec.idx" ] ||
        "$dir/tandem" build --quiet --codec "$codec" -o "$corpus/v3-$codec.idx" "$dir/seed.txt" || true
    done
    for i in $(seq 1 600); do
      printf '{"id": "d%d", "vector": {"a": %d, "##b": 0.%d, "c%d": 2.5}}\n' "$i" $((i % 9)) $((i % 10)) $((i % 5))
    done > "$dir/seed.jsonl"
    [ -f "$corpus/v3-impact.idx" ] || "$dir/tandem" build --quiet --format jsonvector \
      --quantize linear:8 -o "$corpus/v3-impact.idx" "$dir/seed.jsonl" || true
  fi
  # Seed the CIFF reader with the toy export from Anserini.
  if [ "$t" = fuzz_ciff ] && [ -z "$(ls -A "$corpus")" ] && [ -f "$data/ciff/toy-complete-20200309.ciff" ]; then
    cp "$data/ciff/toy-complete-20200309.ciff" "$corpus/"
  fi
  # Seed the text parsers and the PISA reader with small valid inputs.
  if [[ "$t" == fuzz_parse_* || "$t" == fuzz_pisa ]] && [ -z "$(ls -A "$corpus")" ]; then
    scripts/fuzz_seeds.sh "$t" "$corpus" "$dir/tandem" "$data"
  fi
  # Seed the serve request parser with valid /search and /search/batch bodies.
  if [ "$t" = fuzz_serve_req ] && [ -z "$(ls -A "$corpus")" ]; then
    printf '{"query": "boundary layer", "k": 10, "algorithm": "wand", "policy": "hybrid"}' > "$corpus/text"
    printf '{"terms": {"flow": 1.5, "heat": 2}, "scoring": "bm25", "k1": 0.9, "b": 0.4, "device": "auto"}' > "$corpus/terms"
    printf '[{"query": "a"}, {"terms": {"b": 1}, "device": 0}]' > "$corpus/batch"
    printf '{"queries": [{"query": "x", "scoring": "impact"}]}' > "$corpus/queries"
  fi
  echo "== $t for ${secs}s"
  # (the OpenCL implementation's own leaks, which fuzz_search meets, are
  # suppressed as in the tests; PoCL alone, as in the asan preset: rusticl's
  # driver leaks at exit in a module LSan cannot name)
  vendors=/etc/OpenCL/vendors/pocl.icd
  if [ -f "$vendors" ]; then export OCL_ICD_VENDORS=$vendors; fi
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=tests/lsan.supp "$dir/fuzz/$t" -max_total_time="$secs" -max_len=65536 \
    -artifact_prefix="$dir/" -print_final_stats=1 "$corpus" 2>&1 | tail -n 15 || status=1
done
exit $status
