"""PaddleOCR 3.x with local model folders, for machines that have them (`pip install .[paddle]`).

PaddleOCR is imported only when this engine reads its first crop, so the default install and CI
never import it. `predict()` returns one result per image; each is dict-like with `rec_texts`,
`rec_scores` and `rec_polys` (4-point polygons) or `rec_boxes` ([x0, y0, x1, y1]).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from interleaf.pdf.ocr.config import PaddleOcrConfig
from interleaf.pdf.ocr.images import check_image
from interleaf.pdf.ocr.protocol import OcrLine


def paddle_kwargs(config: PaddleOcrConfig) -> dict[str, Any]:
    """Constructor arguments of `paddleocr.PaddleOCR` for a config: only what is set is passed, and
    document-level models (orientation, unwarping) are off: the input is already a clean crop."""
    kwargs: dict[str, Any] = {
        "use_doc_orientation_classify": False,
        "use_doc_unwarping": False,
        "use_textline_orientation": config.use_textline_orientation,
        "device": config.device,
    }
    for key in (
        "text_detection_model_dir",
        "text_detection_model_name",
        "text_recognition_model_dir",
        "text_recognition_model_name",
        "textline_orientation_model_dir",
        "lang",
    ):
        value = getattr(config, key)
        if value is not None:
            kwargs[key] = value
    return kwargs


def lines_from_result(result: Mapping[str, Any] | Any) -> list[OcrLine]:
    """Map one PaddleOCR 3.x result (an OCRResult, or its `.json["res"]` dict) to OcrLines."""
    if not isinstance(result, Mapping) and hasattr(result, "json"):
        result = result.json.get("res", result.json)
    texts = list(result.get("rec_texts") or [])
    scores = list(result.get("rec_scores") or [])
    boxes = result.get("rec_boxes")
    polys = result.get("rec_polys")
    lines = []
    for i, text in enumerate(texts):
        if not str(text).strip():
            continue
        if boxes is not None and len(boxes) > i:
            x0, y0, x1, y1 = (float(v) for v in np.asarray(boxes[i]).reshape(-1)[:4])
        elif polys is not None and len(polys) > i:
            pts = np.asarray(polys[i], dtype=np.float32).reshape(-1, 2)
            (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
        else:
            continue
        conf = float(scores[i]) if i < len(scores) else 0.0
        lines.append(OcrLine((float(x0), float(y0), float(x1), float(y1)), str(text).strip(), conf))
    return lines


class PaddleOcrEngine:
    name = "paddleocr"

    def __init__(self, config: PaddleOcrConfig) -> None:
        self.config = config
        self._ocr: Any = None

    def fingerprint_config(self) -> dict[str, Any]:
        return {"engine": "paddleocr", **self.config.model_dump(exclude={"device"})}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled to a page worker without the loaded pipeline: each worker loads its own."""
        return {**self.__dict__, "_ocr": None}

    def _engine(self) -> Any:
        if self._ocr is None:
            from paddleocr import PaddleOCR  # optional extra: never imported unless configured

            self._ocr = PaddleOCR(**paddle_kwargs(self.config))
        return self._ocr

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        check_image(image_bgr)
        results = self._engine().predict(image_bgr)
        return [line for result in results for line in lines_from_result(result)]
