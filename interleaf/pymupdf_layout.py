"""pymupdf's layout analyzer, loaded when pymupdf first asks for a layout instead of at import.

pymupdf 2.0 imports its optional layout package (`pymupdf.layout`, installed with it) when it is
itself imported, and that loads an ONNX model: +53 MB RSS in every process that imports pymupdf,
the command, the forkserver and each page worker. Interleaf's layouts come from its own parsers and
never ask pymupdf for one; only `page.get_layout()` and `find_tables()` do. So until one of them
does, `pymupdf.layout` is a stand-in whose only act (at import, and in `activate()`, which pymupdf4llm
calls) is to give pymupdf a `_get_layout` that imports the real package, which loads the model, and
hands over to it: what pymupdf returns is unchanged.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from types import ModuleType
from typing import Any

PACKAGE = "pymupdf.layout"
_LOADING = threading.Lock()


class _StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(name, self) if name == PACKAGE else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # run inside pymupdf's own `import pymupdf.layout`, after it set `_get_layout = None`
        module.activate = _activate  # what pymupdf4llm calls (at its import, from pymupdf's)
        _activate()


def _activate() -> None:
    pymupdf = sys.modules["pymupdf"]
    if not callable(pymupdf._get_layout):
        pymupdf._get_layout = _layout


_STAND_IN = _StandIn()


def _layout(*args: Any, **kwargs: Any) -> Any:
    pymupdf = sys.modules["pymupdf"]
    with _LOADING:
        if pymupdf._get_layout is _layout:
            sys.meta_path.remove(_STAND_IN)
            del sys.modules[PACKAGE]
            pymupdf._get_layout = None  # the real package's activate() keeps a function already set
            importlib.import_module(PACKAGE)
    return pymupdf._get_layout(*args, **kwargs)


def defer() -> None:
    """Before pymupdf is imported: its layout model loads at the first layout asked for. After, a
    no-op (the model is loaded already)."""
    if "pymupdf" not in sys.modules and _STAND_IN not in sys.meta_path:
        sys.meta_path.insert(0, _STAND_IN)
