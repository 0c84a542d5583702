"""The OpenAI-compatible describer against a real HTTP server on loopback (tests/support/chat_server.py) that
checks each request as the Chat Completions API defines it and answers in its response shape."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from interleaf.describe.config import OpenAIConfig
from interleaf.describe.openai_describer import OpenAIDescriber
from interleaf.describe.protocol import DescribeRequest
from interleaf.prompts import load_prompt
from tests.support.chat_server import ChatServer, running


@pytest.fixture
def server() -> Iterator[ChatServer]:
    srv = ChatServer(
        "qwen-vl-test",
        "test-key",
        check_text=lambda text: [] if "Describe this" in text else ["prompt"],
        reply=lambda text, _png: f"A chart. {text[:60]}",
    )
    with running(srv):
        yield srv


@pytest.fixture(scope="module")
def png(corpus: Path) -> bytes:
    import pymupdf

    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        return doc[0].get_pixmap(dpi=30).tobytes("png")


def describer(server: ChatServer, monkeypatch: pytest.MonkeyPatch, **overrides: object) -> OpenAIDescriber:
    monkeypatch.setenv("TEST_VLM_KEY", "test-key")
    config = OpenAIConfig(
        base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
        model="qwen-vl-test",
        api_key_env="TEST_VLM_KEY",
        **{"backoff_s": 0.01, "timeout_s": 5.0, **overrides},
    )
    return OpenAIDescriber(config, load_prompt("describe_image"))


def requests(png: bytes, n: int) -> list[DescribeRequest]:
    return [DescribeRequest(f"q{i}", "figure", i, png, f"Figure {i}") for i in range(n)]


def test_requests_follow_the_api_and_answers_are_read(
    server: ChatServer, png: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = describer(server, monkeypatch, concurrency=3).describe(requests(png, 5))
    assert server.errors == []
    assert len(server.requests) == 5
    assert [d.error for d in out] == [None] * 5
    assert all(d.text and d.text.startswith("A chart.") and d.sources == ("image",) for d in out)
    assert "page 3" in out[2].text  # answers stay in request order despite the thread pool


def test_retries_a_500_then_succeeds(server: ChatServer, png: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    server.script = ["500", "500", "ok"]
    (out,) = describer(server, monkeypatch, retries=2).describe(requests(png, 1))
    assert out.text and out.error is None
    assert len(server.requests) == 3


def test_retries_are_bounded(server: ChatServer, png: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    server.script = ["500"] * 5
    (out,) = describer(server, monkeypatch, retries=1).describe(requests(png, 1))
    assert out.text is None and "HTTP 500" in out.error and "2 attempts" in out.error
    assert len(server.requests) == 2


def test_timeout_becomes_a_reject(server: ChatServer, png: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    server.script = ["sleep", "sleep"]
    (out,) = describer(server, monkeypatch, timeout_s=0.2, retries=1).describe(requests(png, 1))
    assert out.text is None and out.error.startswith("timeout")


def test_ingest_uses_the_server_by_config_alone(
    server: ChatServer, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`describer: openai` in config, no code change: the ingest flow sends every image quote."""
    from tests.conftest import run_cli, sql_rows

    monkeypatch.setenv("TEST_VLM_KEY", "test-key")
    root = tmp_path / "warehouse"
    overrides = {
        "describe.describer": "openai",
        "describe.openai.base_url": f"http://127.0.0.1:{server.server_address[1]}/v1",
        "describe.openai.model": "qwen-vl-test",
        "describe.openai.api_key_env": "TEST_VLM_KEY",
    }
    args = [a for key, value in overrides.items() for a in ("--set", f"{key}={value}")]
    run_cli(root, *args, "ingest", str(corpus / "docs" / "figures-example.pdf"))
    rows = sql_rows(root, "select describer, model, vlm_text from quote_texts")
    image_quotes = sql_rows(root, "select count(*) n from quotes where kind in ('figure', 'table', 'equation')")
    assert server.errors == []
    assert len(rows) == image_quotes[0]["n"] > 0
    assert all(r["describer"] == "openai" and r["model"] == "qwen-vl-test" for r in rows)
    assert all(r["vlm_text"].startswith("A chart. ") for r in rows)
    assert len(server.requests) == len(rows)
