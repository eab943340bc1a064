"""Index a collection: python index.py DOCS INDEX

DOCS: one document a line ("name<TAB>text"), TREC, SMART or JSON lines, or
gzip of any (tandem.build tells them apart). A progress bar is drawn on a
terminal; Ctrl-C stops the build and leaves nothing behind."""
import sys

import tandem


def main(docs: str, index: str) -> None:
    tandem.build(docs, index)
    with tandem.Engine() as engine, engine.open(index) as s:
        st = s.stats
        print("%s: %d documents, %d terms, codec %s" % (index, st["documents"], st["terms"],
                                                       st["codec"]))


if __name__ == "__main__":
    main(*sys.argv[1:3])
