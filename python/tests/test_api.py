"""The public API is typed and documented (issue 34 item 4): every public
class, function, method and property of tandem, tandem.engine, tandem.run,
tandem.errors (and tandem.pyterrier where PyTerrier is installed) has a
docstring that help() shows and annotations on every parameter and its
return; the package ships py.typed; and, where mypy is installed, the
package passes `mypy --strict` (skipped otherwise, saying so)."""
from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
import typing

import pytest

import tandem

MODULES = ["tandem", "tandem.engine", "tandem.run", "tandem.errors", "tandem._build",
           "tandem._types"]
PKG = os.path.dirname(os.path.abspath(tandem.__file__))


def _modules():
    mods = [importlib.import_module(m) for m in MODULES]
    try:
        mods.append(importlib.import_module("tandem.pyterrier"))
    except ImportError:
        pass   # optional; its own tests need it
    return mods


def _public(mod):
    """(qualified name, object) of each public name a module defines or
    exports (its __all__ when it has one)."""
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for n in names:
        obj = getattr(mod, n)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield "%s.%s" % (mod.__name__, n), obj


def _members(cls):
    """Public methods and properties a class defines itself (inherited ones
    are checked where they are defined), plus __init__."""
    for n, v in vars(cls).items():
        if n.startswith("_") and n != "__init__":
            continue
        if isinstance(v, property):
            yield n, v.fget
        elif isinstance(v, (staticmethod, classmethod)):
            yield n, v.__func__
        elif inspect.isfunction(v):
            yield n, v


def _unannotated(fn):
    sig = inspect.signature(fn)
    missing = [p.name for i, p in enumerate(sig.parameters.values())
               if p.annotation is inspect.Parameter.empty
               and not (i == 0 and p.name in ("self", "cls"))]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def _everything():
    seen = set()
    for mod in _modules():
        for name, obj in _public(mod):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield name, obj, None
            if inspect.isclass(obj) and obj.__module__.startswith("tandem"):
                for m, fn in _members(obj):
                    yield "%s.%s" % (name, m), fn, obj


def test_every_public_name_is_documented():
    bad = []
    for name, obj, owner in _everything():
        if obj.__module__ and not obj.__module__.startswith("tandem"):
            continue   # a re-exported foreign class (none today)
        if name.endswith(".__init__"):
            continue   # documented by its class
        doc = inspect.getdoc(obj)
        if not doc or not doc.strip():
            bad.append(name)
    assert not bad, "no docstring (help() shows nothing): %s" % ", ".join(bad)


def test_every_public_function_is_annotated():
    bad = []
    for name, obj, owner in _everything():
        if inspect.isclass(obj) or not obj.__module__.startswith("tandem"):
            continue
        missing = _unannotated(obj)
        if missing:
            bad.append("%s (%s)" % (name, ", ".join(missing)))
    assert not bad, "missing annotations: %s" % "; ".join(bad)


def test_annotations_resolve():
    """The hints evaluate (typing.get_type_hints) on this Python: written
    with typing's names, never 3.10's X | Y, so that 3.9 reads them too."""
    for name, obj, owner in _everything():
        if inspect.isclass(obj) or not obj.__module__.startswith("tandem"):
            continue
        mod = sys.modules[obj.__module__]
        typing.get_type_hints(obj, vars(mod))
        assert " | " not in str(inspect.signature(obj)), name


def test_help_shows_the_docs():
    text = []
    import pydoc
    for obj in (tandem.Engine, tandem.Searcher.search, tandem.build, tandem.import_ciff,
                tandem.write_trec_run):
        text.append(pydoc.render_doc(obj, renderer=pydoc.plaintext))
    out = "\n".join(text)
    assert "The OpenCL devices tandem searches on" in out
    assert "query: Union[str, bytes" in out or "query: 'Query'" in out \
        or "query: Query" in out, out[:2000]
    assert "stemmer, stopwords: the analyzer the index records" in out


def test_py_typed_shipped():
    assert os.path.isfile(os.path.join(PKG, "py.typed"))
    toml = os.path.join(PKG, "..", "pyproject.toml")
    if os.path.exists(toml):   # the checkout: the wheel's config takes it
        text = open(toml).read()
        assert "py.typed" in text or 'wheel.packages = ["tandem"]' in text


def test_mypy_strict():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("skipped: mypy not installed (pip install mypy to type-check the "
                    "package here)")
    p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                        "--cache-dir", os.devnull, "-p", "tandem"],
                       cwd=os.path.join(PKG, ".."), capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
