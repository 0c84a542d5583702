"""The shape of a VLM backend's configuration, shared by the describer and the LMM filter: each
stage's section (`describe.transformers`, `retrieve.lmm_filter.openai`...) extends one of these
with what only it needs (token budgets, fingerprints)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from interleaf.strict import Strict


class QwenVLConfig(Strict):
    """Qwen2.5-VL, any size, through transformers: hub id or local folder."""

    model: str = "Qwen/Qwen2.5-VL-3B-Instruct"
    device: str = "cpu"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    batch_size: int = Field(4, ge=1)
    min_pixels: int = Field(64 * 28 * 28, ge=28 * 28)
    max_pixels: int = Field(1024 * 28 * 28, ge=28 * 28)

    @model_validator(mode="after")
    def _pixel_budget(self) -> Self:
        if self.min_pixels > self.max_pixels:
            raise ValueError(f"min_pixels ({self.min_pixels}) is above max_pixels ({self.max_pixels})")
        return self


class ChatServerConfig(Strict):
    """Any OpenAI-compatible Chat Completions server: vLLM, SGLang, Ollama, a hosted API."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "Qwen/Qwen2.5-VL-7B-Instruct"
    api_key_env: str = "OPENAI_API_KEY"  # the key is read from this variable, never from config
    concurrency: int = Field(4, ge=1, le=256)
    timeout_s: float = Field(120.0, gt=0)
    retries: int = Field(3, ge=0, le=10)  # on 429, 5xx and transport errors
    backoff_s: float = Field(1.0, ge=0)  # doubled after each retry
    max_tokens: int = Field(512, ge=1)
    temperature: float = Field(0.0, ge=0, le=2)
