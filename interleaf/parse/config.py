"""Shape of the parse stage's configuration; values live in configs/*.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LayoutConfig(Strict):
    """The offline default: rapid-layout regions + PDF text layer, RapidOCR where it is unusable."""

    conf_thresh: float = Field(0.5, ge=0, le=1)
    iou_thresh: float = Field(0.5, ge=0, le=1)
    crop_dpi: int = Field(144, ge=36, le=600)  # resolution of figure / table PNG crops
    ocr_dpi: int = Field(200, ge=72, le=600)  # resolution at which pages without text are read
    # A text layer is "usable" when at least this share of its tokens look like words or numbers.
    min_clean_token_share: float = Field(0.6, ge=0, le=1)
    min_caption_gap_pt: float = 40.0  # how far a caption may sit from its figure or table


class MineruConfig(Strict):
    tier: Literal["flash", "basic", "standard", "advanced"] = "flash"
    ocr_mode: Literal["auto", "txt", "ocr"] = "auto"
    image_analysis: bool = False
    # Where MinerU looks for model files beyond flash (OCR, layout): `local` never touches the
    # network, so a missing model fails in seconds instead of after a download attempt.
    model_source: Literal["local", "modelscope", "huggingface"] = "local"


class ParseConfig(Strict):
    backend: Literal["layout", "mineru"] = "layout"
    layout: LayoutConfig = LayoutConfig()
    mineru: MineruConfig = MineruConfig()
    # How the work is spread; changes speed, never output, so it is not fingerprinted.
    workers: int = Field(2, ge=1, le=64)
    pages_per_chunk: int = Field(8, ge=1)

    def fingerprint_config(self) -> dict[str, Any]:
        backend_config = getattr(self, self.backend).model_dump(exclude={"model_source"})
        return {"backend": self.backend, self.backend: backend_config}
