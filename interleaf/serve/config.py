"""Shape of the HTTP server's configuration (`serve.api` in configs/default.yaml)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from interleaf.strict import Strict


class RateLimitConfig(Strict):
    """A token bucket per API key (per client address where reading is open and no key is sent)."""

    per_minute: int = Field(240, ge=0)  # 0: no limit; one offline /v1/ask takes ~0.25 s here, 240 a minute
    burst: int = Field(30, ge=1)  # requests a client may send at once before the rate applies


class ApiConfig(Strict):
    host: str = "127.0.0.1"  # loopback: another address must be asked for (`interleaf serve --host`)
    port: int = Field(8080, ge=1, le=65535)
    model_name: str = "interleaf"  # the model id /v1/models lists and chat completions accept (besides "interleaf")
    # open: anyone who reaches the server may ask and read; keyed: reading needs an API key too.
    # Uploading always needs a key.
    read_access: Literal["open", "keyed"] = "open"
    keys_file: str | None = None  # `name sha256:<hex>` lines; None: <warehouse>/api-keys (`serve --new-key` writes)
    keys_env: str = "INTERLEAF_API_KEYS"  # comma-separated keys (`name=key` or `key`), hashed when read
    rate_limit: RateLimitConfig = RateLimitConfig()
    cors_origins: list[str] = Field(default_factory=list)  # empty: no cross-origin access at all
    max_upload_mb: float = Field(50.0, gt=0)
    max_question_chars: int = Field(4000, ge=1)
    answer_workers: int = Field(2, ge=1)  # questions answered at once; the rest wait their turn
    reload_poll_s: float = Field(2.0, gt=0)  # how often the server looks for a newly published ingest
    page_dpi: int = Field(100, ge=36, le=300)  # /v1/documents/{id}/pages/{n}.png
    page_cache: int = Field(64, ge=0)  # rendered page images kept in memory
    # warehouse parts kept in memory once read (0: off): an answer reads the corpus's quotes,
    # texts and documents; decoding them for every question cost 0.46 s of CPU per fresh /v1/ask
    # of 0.71 (qa_dev, docs/ + bad/ warehouse, measured here)
    part_cache_mb: int = Field(512, ge=0)
    context_turns: int = Field(2, ge=0)  # earlier user turns of a chat given to query expansion
