"""The ctypes structs of tandem/_lib.py have the C header's layout: a C
program compiled against include/tandem.h prints every size and offset."""
import os
import shutil
import subprocess

import pytest

from tandem import _lib

STRUCTS = {
    "tdm_device_info": _lib.DeviceInfo, "tdm_engine_options": _lib.EngineOptions,
    "tdm_index_stats": _lib.IndexStats, "tdm_index_build_progress": _lib.BuildProgress,
    "tdm_index_build_options": _lib.BuildOptions,
    "tdm_index_import_progress": _lib.ImportProgress,
    "tdm_index_import_options": _lib.ImportOptions, "tdm_search_options": _lib.SearchOptions,
    "tdm_search_term": _lib.SearchTerm, "tdm_search_hit": _lib.SearchHit,
    "tdm_search_result": _lib.SearchResult,
}
if _lib.HAVE_BATCH:
    STRUCTS["tdm_search_query"] = _lib.SearchQuery
# Fields the library has only from the batch API on.
LATER = {"tdm_search_result": ("status", "error", "batch")}


def _header():
    inc = os.environ.get("TANDEM_INCLUDE") or os.path.join(
        os.path.dirname(__file__), "..", "..", "include")
    if not os.path.exists(os.path.join(inc, "tandem.h")):
        pytest.skip("skipped: no include/tandem.h (TANDEM_INCLUDE)")
    return inc


def test_layouts_match_header(tmp_path):
    inc = _header()
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("skipped: no C compiler")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "tandem.h"',
             "int main(void) {"]
    for cname, py in STRUCTS.items():
        for f, _ in py._fields_:
            if f in LATER.get(cname, ()) and not _lib.HAVE_BATCH:
                continue
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (cname, f, cname, f))
    lines.append("return 0; }")
    src = tmp_path / "abi.c"
    src.write_text("\n".join(lines))
    exe = str(tmp_path / "abi")
    subprocess.run([cc, "-I", inc, "-o", exe, str(src)], check=True)
    got = dict(l.rsplit(" ", 1) for l in subprocess.run(
        [exe], capture_output=True, text=True, check=True).stdout.splitlines())
    for cname, py in STRUCTS.items():
        for f, _ in py._fields_:
            key = "%s.%s" % (cname, f)
            if key in got:
                assert int(got[key]) == getattr(py, f).offset, key
