"""PyMuPDF and OpenCV as the modules of this package name them: imported at their first use
(interleaf/runtime/lazy_module.py), so that the command's process, which reads no page, never holds them.
The page workers import both in their forkserver, before it forks them (interleaf/runtime/executor.py)."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from interleaf.runtime.lazy_module import OnFirstUse


def _quiet(module: ModuleType) -> None:
    # MuPDF prints what it repairs on stderr; the reasons that matter are read back (mupdf_errors)
    module.TOOLS.mupdf_display_errors(False)
    module.TOOLS.mupdf_display_warnings(False)


if TYPE_CHECKING:
    import cv2
    import pymupdf
else:
    pymupdf = OnFirstUse("pymupdf", _quiet)
    cv2 = OnFirstUse("cv2")

__all__ = ["cv2", "pymupdf"]
