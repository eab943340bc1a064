#!/usr/bin/env bash
# Writes a small seed corpus for one of the text parser or PISA fuzz targets.
# Usage: scripts/fuzz_seeds.sh TARGET CORPUS_DIR TANDEM_CLI [DATA_DIR]
set -euo pipefail
t=$1 out=$2 cli=$3 data=${4:-}
mkdir -p "$out"
trec() {
  printf '<DOC>\n<DOCNO> D-1 </DOCNO>\n<TEXT>Alpha <b>beta</b> a < b, x<5</TEXT>\n</DOC>\n'
  printf '<DOC><DOCNO>D-2</DOCNO>x</DOC><DOC><DOCNO>D-3</DOCNO><!-- c --><a href="u">y</a></DOC>\n'
}
smart() { printf '.I 1\n.T\nA title\n.A\nAuthor\n.W\nthe words\n.X\n1 2\n.I 2\n.W\nsecond\n'; }
jsonl() {
  printf '{"id": "d1", "contents": "caf\\u00e9 \\"q\\" \\ud83d\\ude00"}\n'
  printf '{"meta": {"x": [1, -2.5e3, true, null]}, "id": 42, "contents": "tab\\there"}\n'
}
lines() { printf 'd1\thello world\n\nd2\tsecond doc\r\nno tab here\n'; }
case $t in
  fuzz_parse_trec) trec > "$out/a.trec"; printf '\xef\xbb\xbf' > "$out/bom.trec"; trec >> "$out/bom.trec" ;;
  fuzz_parse_smart)
    smart > "$out/a.all"
    if [ -f "$data/cranfield/cran.all.1400" ]; then head -n 200 "$data/cranfield/cran.all.1400" > "$out/cran.all"; fi ;;
  fuzz_parse_jsonl) jsonl > "$out/a.jsonl" ;;
  fuzz_parse_lines) lines > "$out/a.tsv" ;;
  fuzz_parse_gzip)
    trec | gzip -c > "$out/trec.gz"; smart | gzip -c > "$out/smart.gz"
    jsonl | gzip -c > "$out/jsonl.gz"; lines | gzip -c > "$out/lines.gz"
    lines > "$out/plain.tsv"; printf '' | gzip -c > "$out/empty.gz"
    { lines; lines; } | gzip -c | head -c 30 > "$out/cut.gz" ;;
  fuzz_pisa)
    tmp=$(mktemp -d)
    printf 'd1\tboundary layer flow\nd2\tflow of heat\nd3\tlayer\n' > "$tmp/seed.txt"
    "$cli" build --quiet -o "$tmp/seed.idx" "$tmp/seed.txt"
    "$cli" export --to pisa "$tmp/seed.idx" -o "$tmp/c"
    sep=$'\n=PISA=\n'
    { cat "$tmp/c.docs"; printf '%s' "$sep"; cat "$tmp/c.freqs"; printf '%s' "$sep"
      cat "$tmp/c.sizes"; printf '%s' "$sep"; cat "$tmp/c.terms"; printf '%s' "$sep"
      cat "$tmp/c.documents"; } > "$out/seed.pisa"
    { cat "$tmp/c.docs"; printf '%s' "$sep"; cat "$tmp/c.freqs"; printf '%s' "$sep"
      cat "$tmp/c.sizes"; } > "$out/noterms.pisa"
    rm -rf "$tmp" ;;
  *) echo "fuzz_seeds.sh: no seeds for $t" >&2; exit 1 ;;
esac
