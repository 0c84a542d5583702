"""OCR engines and describers by name, as chosen in config (`describe.ocr.backend`, `describe.describer`)."""

from __future__ import annotations

from interleaf.describe.config import DescribeConfig, OcrConfig
from interleaf.describe.protocol import Describer
from interleaf.pdf.ocr.protocol import OcrEngine
from interleaf.prompts import load_prompt


def get_ocr_engine(config: OcrConfig) -> OcrEngine:
    if config.backend == "rapidocr":
        from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine

        return RapidOcrEngine(config.rapidocr)
    if config.backend == "paddleocr":
        from interleaf.pdf.ocr.paddleocr_engine import PaddleOcrEngine

        return PaddleOcrEngine(config.paddleocr)
    raise ValueError(f"unknown OCR backend {config.backend!r}")


def get_describer(config: DescribeConfig) -> Describer:
    if config.describer == "offline":
        from interleaf.describe.offline_describer import OfflineDescriber

        return OfflineDescriber()
    prompt = load_prompt(config.prompt)
    if config.describer == "transformers":
        from interleaf.describe.transformers_describer import TransformersDescriber

        return TransformersDescriber(config.transformers, prompt)
    if config.describer == "openai":
        from interleaf.describe.openai_describer import OpenAIDescriber

        return OpenAIDescriber(config.openai, prompt)
    raise ValueError(f"unknown describer {config.describer!r}")


def prompt_hashes(config: DescribeConfig) -> list[str]:
    return [] if config.describer == "offline" else [load_prompt(config.prompt).hash]
