"""Type aliases of the public API (for annotations; nothing here at run time
beyond the aliases themselves)."""
from __future__ import annotations

import os
from typing import List, Mapping, Sequence, Tuple, Union

__all__ = ["StrPath", "Term", "Query", "Hits"]

#: A file name: str, bytes (passed to C as they are) or a path object.
StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

#: A query term: a str as the index stores it, or an int, its position in the
#: index's lexicon.
Term = Union[str, bytes, int]

#: A query: text (through the index's tokenizer, stopwords and stemmer), a
#: list of terms (weight 1 each), or a dict term -> weight.
Query = Union[str, bytes, Sequence[Term], Mapping[Term, float]]

#: One query's results: (docname, score) pairs, best first.
Hits = List[Tuple[str, float]]
