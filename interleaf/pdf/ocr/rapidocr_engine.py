"""RapidOCR with its bundled PP-OCR det/rec/cls models: fully offline, the default OCR engine.

Used by the layout parser for pages without a usable text layer and by the describe stage for the
crops of figures and tables.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from interleaf.pdf.ocr.config import RapidOcrConfig
from interleaf.pdf.ocr.images import check_image, pad_to_aspect
from interleaf.pdf.ocr.protocol import OcrLine
from interleaf.runtime.heap import return_freed_memory
from interleaf.runtime.memory_budget import model_step, room_for_detection

# One image at a time per process: two tasks in flight must not oversubscribe the cores.
_LOCK = threading.Lock()
_BUILDING = threading.Lock()  # RapidOCR's session options are patched while an engine is built
# Longer strips get a white margin: the detector scales the short side up to 736 px (see pad_to_aspect).
MAX_ASPECT = 16.0


def _bounded_preprocess(detector: Any) -> Callable[[], Any]:
    """RapidOCR's detector input sizing (the short side scaled up to `limit_side_len`), held to
    `detector.max_side` pixels on the longer side (None: RapidOCR's own sizing). The boxes found are
    mapped back to the image RapidOCR was given, and the lines cropped from it: only detection sees
    the smaller image."""
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    class BoundedDetPreProcess(DetPreProcess):
        def __init__(self, max_side: int | None, *args: Any) -> None:
            super().__init__(*args)
            self.max_side = max_side

        def resize(self, img: np.ndarray) -> np.ndarray | None:
            h, w = img.shape[:2]
            upscale = max(1.0, self.limit_side_len / max(min(h, w), 1))
            if self.max_side is None or max(h, w) * upscale <= self.max_side:
                return super().resize(img)
            return DetPreProcess(self.max_side, "max", self.mean, self.std).resize(img)

    def preprocess() -> BoundedDetPreProcess:
        return BoundedDetPreProcess(
            detector.max_side, detector.limit_side_len, detector.limit_type, detector.mean, detector.std
        )

    return preprocess


@contextlib.contextmanager
def _lean_sessions(blocked_layout: bool) -> Iterator[None]:
    """The ONNX Runtime sessions RapidOCR builds meanwhile plan no memory pattern, and leave the
    graph's layout as it is unless `blocked_layout` (rapidocr==3.10.0, pinned, sets neither).
    - A pattern is planned for one input shape and holds one block for all of a run's activations;
      the detector and the recognizer see a new shape with every image and line, so it only added to
      each read's peak. Measured on 40 raster crops of the IRS manual: the largest read +479 -> +353 MB
      over the worker, in the same time (79.1 and 78.2 s).
    - ORT_ENABLE_ALL, RapidOCR's level, adds the layout optimizations on top of ORT_ENABLE_EXTENDED:
      blocked-channel (NCHWc) copies of the activations. The detector goes without them: on the
      corpus's 6 scanned pages (two runs), the same texts, the largest page read +600-603 ->
      +529-578 MB; benchmarks/bench_ocr.py (`make bench`), the same word P/R and needles, the
      largest read +558 -> +377 MB, for 8% more OCR CPU (141 -> 152 s). The recognizer keeps them:
      its input is one line 48 px high, whose copies are small, and without them it took 17% more CPU
      (14 raster figures of the IRS manual, 1,005 lines: 48.0 -> 58.1 s, the same texts)."""
    import onnxruntime as ort
    from rapidocr.inference_engine.onnxruntime import main as onnxruntime_engine

    sessions = onnxruntime_engine.OrtInferSession
    own = sessions._init_sess_opts
    levels = ort.GraphOptimizationLevel
    level = levels.ORT_ENABLE_ALL if blocked_layout else levels.ORT_ENABLE_EXTENDED

    def options(cfg: Any) -> Any:
        opts = own(cfg)
        opts.enable_mem_pattern = False
        opts.graph_optimization_level = level
        return opts

    sessions._init_sess_opts = staticmethod(options)
    try:
        yield
    finally:
        sessions._init_sess_opts = staticmethod(own)


@functools.cache
def rapidocr_engine(threads: int) -> Any:
    """One engine per process and thread count, parse's and describe's alike (a second one held
    ~40 MB more in each page worker); `detector_bound` sets the detector's input size per read."""
    from rapidocr import RapidOCR

    with _BUILDING:
        engine = RapidOCR(
            params={
                # an image with no text in it is an outcome (a reject row), not a warning on the terminal
                "Global.log_level": "error",
                # The default (-1) takes every core in each worker process and thrashes 2 cores.
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                # Lines one at a time, not padded to the widest of 6: a batch of 6 lines 1,984 px wide
                # (at the recognizer's 48 px height) takes +665 MB, one line +75 MB, and is as fast a
                # line. benchmarks/bench_ocr.py, 6 -> 1 a batch: OCR CPU 153 -> 133 s, largest read
                # +895 -> +592 MB, word recall against the text layer of 40 crops 0.939 -> 0.938.
                "Rec.rec_batch_num": 1,
            }
        )
        # rapidocr==3.10.0 (pinned) builds its sessions at their first use: here, under the patch
        with _lean_sessions(blocked_layout=False):
            detector = engine._load_det_model()
        with _lean_sessions(blocked_layout=True):
            engine._load_rec_model()
            if engine.use_cls:
                engine._load_cls_model()
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    # and the detector's preprocessing per call, from get_preprocess
    detector.max_side = None
    detector.get_preprocess = _bounded_preprocess(detector)
    detector.session = _BudgetedSession(detector.session, lambda tensor: room_for_detection(tensor.shape))
    for model in (engine.text_rec, engine.text_cls):
        if model is not None:
            model.session = _BudgetedSession(model.session, lambda _: model_step())
    engine.lines_checked = "vertical"
    _classify_chosen_lines(engine)
    return engine


def _turned(box: np.ndarray) -> bool:
    """Whether RapidOCR turns this detected line a quarter turn before reading it: a line at least
    1.5 times as tall as it is wide (rapidocr==3.10.0's rule in `get_rotate_crop_image`, pinned)."""
    width = int(max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3])))
    height = int(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2])))
    return height >= 1.5 * width


def _classify_chosen_lines(engine: Any) -> None:
    """RapidOCR's orientation classifier run on the lines `engine.lines_checked` names only
    (`RapidOcrConfig.textline_orientation`): "vertical", the lines it turned a quarter turn, whose
    reading direction that turn guesses (a chart's axis title reads bottom to top); "all", every
    line, as RapidOCR does."""
    crop_all, classify_all = engine.crop_text_regions, engine.cls_and_rotate
    turned: list[int] = []

    def crop_text_regions(img: np.ndarray, det_boxes: np.ndarray) -> list[np.ndarray]:
        turned[:] = [i for i, box in enumerate(det_boxes) if _turned(np.asarray(box, dtype=np.float32))]
        return crop_all(img, det_boxes)

    def cls_and_rotate(images: list[np.ndarray]) -> tuple[list[np.ndarray], Any]:
        if engine.lines_checked == "all":
            return classify_all(images)
        from rapidocr.ch_ppocr_cls.utils import TextClsOutput

        chosen = [i for i in turned if i < len(images)]
        turned.clear()  # the next read's detection says its own
        out, labels = list(images), [("0", 1.0)] * len(images)
        elapse = 0.0
        if chosen:
            checked, result = classify_all([images[i] for i in chosen])
            for i, image, label in zip(chosen, checked, result.cls_res, strict=True):
                out[i], labels[i] = image, label
            elapse = result.elapse
        return out, TextClsOutput(img_list=out, cls_res=labels, elapse=elapse)

    engine.crop_text_regions, engine.cls_and_rotate = crop_text_regions, cls_and_rotate


class _BudgetedSession:
    """One of RapidOCR's sessions (its OrtInferSession), run when the memory budget lets it
    (interleaf/runtime/memory_budget.py); anything else asked of it is the session's own."""

    def __init__(self, session: Any, turn: Callable[[np.ndarray], contextlib.AbstractContextManager[None]]) -> None:
        self._session = session
        self._turn = turn

    def __call__(self, tensor: np.ndarray) -> np.ndarray:
        with self._turn(tensor):
            return self._session(tensor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def detector_bound(threads: int, max_side: int | None) -> Any:
    """The engine of `threads`, its detector held to `max_side` px until the next call (under _LOCK)."""
    engine = rapidocr_engine(threads)
    engine.text_det.max_side = max_side
    return engine


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, config: RapidOcrConfig) -> None:
        self.config = config

    def fingerprint_config(self) -> dict[str, Any]:
        import rapidocr

        return {"engine": "rapidocr", "version": getattr(rapidocr, "__version__", "3")}

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        check_image(image_bgr)
        image = pad_to_aspect(image_bgr, MAX_ASPECT)
        with _LOCK:
            engine = detector_bound(self.config.threads, self.config.det_max_side)
            engine.lines_checked = self.config.textline_orientation
            result = engine(image, use_cls=self.config.textline_orientation != "off")
            # Each read's activations differ in shape from the last, and malloc, keeping what one
            # freed, could not fit the next in it: a worker ratcheted up read after read. Measured on
            # 40 raster crops of the IRS manual in one process: +736 MB at the peak, +650 MB held at
            # the end; returned after each read, +446 and +86, for 4% more OCR time (75.2 -> 78.2 s).
            return_freed_memory()
        if result.boxes is None or result.txts is None:
            return []
        lines = []
        for box, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
            if not str(text).strip():
                continue
            pts = np.asarray(box, dtype=np.float32).reshape(-1, 2)
            x0, y0 = pts.min(axis=0)
            x1, y1 = pts.max(axis=0)
            lines.append(OcrLine((float(x0), float(y0), float(x1), float(y1)), str(text).strip(), float(score)))
        return lines
