"""Shape of the parse stage's configuration and its defaults (configs/default.yaml is written from them)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from interleaf.strict import Strict


class LayoutConfig(Strict):
    """The offline default: rapid-layout regions + PDF text layer, RapidOCR where it is unusable."""

    conf_thresh: float = Field(0.5, ge=0, le=1)
    iou_thresh: float = Field(0.5, ge=0, le=1)
    crop_dpi: int = Field(144, ge=36, le=600)  # resolution of figure / table PNG crops
    ocr_dpi: int = Field(200, ge=72, le=600)  # resolution at which pages without text are read
    # A text layer is "usable" when at least this share of its tokens look like words or numbers.
    min_clean_token_share: float = Field(0.6, ge=0, le=1)
    min_caption_gap_pt: float = Field(40.0, ge=0)  # how far a caption may sit from its figure or table
    # ONNX Runtime threads of the layout model and the page OCR, in each page worker. Measured on 2
    # cores: 6.3 pages/s with 1 thread, 3.4 with 2; parallelism comes from `parse.workers` instead.
    threads: int = Field(1, ge=1, le=64)


class MineruConfig(Strict):
    tier: Literal["flash", "basic", "standard", "advanced"] = "flash"
    ocr_mode: Literal["auto", "txt", "ocr"] = "auto"
    image_analysis: bool = False
    # Where MinerU looks for model files beyond flash (OCR, layout): `local` never touches the
    # network, so a missing model fails in seconds instead of after a download attempt.
    model_source: Literal["local", "modelscope", "huggingface"] = "local"
    crop_dpi: int = Field(144, ge=36, le=600)  # figure / table / equation crops, rendered from the PDF


class ContentListConfig(Strict):
    """MinerU 2.x/3.x outputs written before: each ingested `<name>.pdf` is read from the
    `<name>_content_list.json` found (at any depth) under `folder`, with the images beside it."""

    folder: str | None = None
    crop_dpi: int = Field(144, ge=36, le=600)  # items whose image file is missing are cropped from the PDF


class LimitsConfig(Strict):
    """What one document, and one page of it, may cost (null: no limit). Each turns a document or
    pages into rejects when reached, so each decides what is stored: all are fingerprinted, and
    raising one reparses what it cut. (The time and memory ones hit only under load or on
    pathological pages, but a stored parse cut by them must not be reused once they are raised.)"""

    # A file over either is rejected before any page work, whole: keeping the first N pages would
    # store a document that silently lacks its end (docling's max_num_pages and max_file_size refuse too).
    max_file_mb: float | None = Field(200.0, gt=0)
    max_pages: int | None = Field(2000, ge=1)
    # Wall-clock seconds of one document's parse: the pages done by then are kept, the rest rejected.
    timeout_s: float | None = Field(1800.0, gt=0)
    # One page's seconds in its worker (a chunk gets this times its pages): a page past it is
    # rejected and its worker killed. Needs page workers: with it set, `workers: 1` is one process.
    page_timeout_s: float | None = Field(120.0, gt=0)
    # Address space (RLIMIT_AS) of each page worker, MB: a page needing more is rejected.
    max_worker_mb: int | None = Field(4096, ge=1024)


class ParseConfig(Strict):
    backend: Literal["layout", "mineru", "content_list"] = "layout"
    layout: LayoutConfig = LayoutConfig()
    mineru: MineruConfig = MineruConfig()
    content_list: ContentListConfig = ContentListConfig()
    # How the work is spread; changes speed, never output, so it is not fingerprinted.
    workers: int = Field(2, ge=1, le=64)
    pages_per_chunk: int = Field(8, ge=1)
    # MB of PSS for the command and every process it started, together: a page worker's OCR text
    # detection waits while another runs and the two would not fit (interleaf/runtime/memory_budget.py); no
    # document is indexed until every one is parsed and described and the page workers are gone
    # (pipeline/chains.py's held level), and the index lets its model go after each document
    # (IndexStage's hold_model). Null: no budget.
    memory_budget_mb: int | None = Field(None, ge=512)
    limits: LimitsConfig = LimitsConfig()
