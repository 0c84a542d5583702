"""A module imported when it is first used, not where a module names it.

The command's process imports the parse and describe modules to run their stages, but it reads no
page: the page workers do. Imported there, PyMuPDF alone held ~95 MB of the process's own memory
(`import pymupdf`, one fresh process), and OpenCV ~26 MB. So those modules name them through a
stand-in that imports the real module at the first attribute asked of it (interleaf/pdf/mupdf.py).

Not importlib's LazyLoader: a lazy module in `sys.modules` is loaded by the next `import` statement
that names it (the import system reads its `__spec__`), and in Python 3.11 two threads touching it
at once can both run its body. Here the real import is an ordinary one, under the import system's
own lock, and the stand-in only forwards to it.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any


class OnFirstUse(ModuleType):
    """Stands for module `name`; `configure` runs once, in each process, after its import."""

    def __init__(self, name: str, configure: Callable[[ModuleType], None] | None = None) -> None:
        super().__init__(name)
        self._first_use_configure = configure
        self._first_use_module: ModuleType | None = None
        self._first_use_lock = threading.Lock()

    def __getattr__(self, attribute: str) -> Any:  # only for what the stand-in does not hold itself
        module = self._first_use_module
        if module is None:
            with self._first_use_lock:
                if self._first_use_module is None:
                    loaded = importlib.import_module(self.__name__)
                    if self._first_use_configure is not None:
                        self._first_use_configure(loaded)
                    self._first_use_module = loaded
            module = self._first_use_module
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._first_use_module is not None else "not imported yet"
        return f"<module {self.__name__!r}, imported at its first use: {state}>"
