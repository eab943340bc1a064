#!/usr/bin/env bash
# WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet) as a text collection
# for `tandem build`: one synset a line, `name<TAB>text` (the lines format).
#
#   scripts/wordnet-collection.sh [WORDNET_DIR] > wordnet.txt
#
# A synset of data.noun/verb/adj/adv (wndb(5WN)) is `offset lex_filenum
# ss_type w_cnt word lex_id ... | gloss`, w_cnt two hex digits. The document
# is named `lemma.ss_type.offset` (the first word; ss_type n, v, a, s or r; the
# offset makes it unique: e.g. `entity.n.00001740`) and its text is every word
# of the synset (underscores as spaces, adjective markers like "(a)" dropped),
# a colon, then the gloss (definition and examples). The licence header lines
# of each file (they start with two spaces) are skipped.
set -euo pipefail
dir=${1:-/usr/share/wordnet}
for pos in noun verb adj adv; do
  if [ ! -r "$dir/data.$pos" ]; then
    echo "wordnet-collection: $dir/data.$pos is missing (Debian package wordnet-base;" \
         "scripts/setup.sh installs it)" >&2
    exit 1
  fi
done
LC_ALL=C awk '
function hex(s,    i, v) {
  v = 0
  for (i = 1; i <= length(s); i++)
    v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
  return v
}
/^[0-9]/ {
  n = hex($4)
  if (n < 1 || NF < 4 + 2 * n) { printf "wordnet-collection: %s line %d: bad synset\n", FILENAME, FNR > "/dev/stderr"; bad = 1; exit 1 }
  words = ""
  for (i = 0; i < n; i++) {
    w = $(5 + 2 * i)
    sub(/\([a-z]+\)$/, "", w)
    if (i == 0) name = tolower(w)
    gsub(/_/, " ", w)
    words = words (i ? ", " : "") w
  }
  g = index($0, " | ")
  gloss = g ? substr($0, g + 3) : ""
  sub(/[ \t]+$/, "", gloss)
  gsub(/\t/, " ", gloss)
  printf "%s.%s.%s\t%s: %s\n", name, $3, $1, words, gloss
}
END { if (bad) exit 1 }
' "$dir/data.noun" "$dir/data.verb" "$dir/data.adj" "$dir/data.adv"
