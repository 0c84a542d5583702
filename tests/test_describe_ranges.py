"""Describe's readings by page range (describe/reading.py), on a real document: spread over page
workers they give the rows read in one piece, and a describe cut short after some ranges reads only
the others on its rerun."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from interleaf.describe.config import DescribeConfig
from interleaf.describe.stage import DescribeStage, DictCache
from interleaf.kinds import CROPPED_KINDS
from interleaf.runtime import interrupt
from interleaf.runtime.executor import PageLimits, page_map
from interleaf.stage import Lost, PageMap, StageInput
from tests.conftest import IngestedWarehouse, view_tables

DOC = "olap-logs-fr.pdf"  # 12 pages; its figures and tables spread over several of them


@pytest.fixture(scope="module")
def parsed(corpus_warehouse: IngestedWarehouse) -> tuple[Path, dict[str, pa.Table]]:
    """The document as parse stored it in the warehouse of docs/ (describe only reads its crops)."""
    root = corpus_warehouse.root
    documents, pages, quotes = view_tables(root, "documents", "pages", "quotes")
    documents = documents.filter(pc.equal(documents["name"], DOC))
    pages = pages.filter(pc.is_in(pages["doc_id"], documents["doc_id"]))
    quotes = quotes.filter(pc.is_in(quotes["doc_id"], documents["doc_id"]))
    return root, {"documents": documents, "pages": pages, "quotes": quotes}


def describe(
    parsed: tuple[Path, dict[str, pa.Table]], pages_per_range: int, cache: DictCache, pages: PageMap = map
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    root, tables = parsed
    stage = DescribeStage(DescribeConfig(pages_per_range=pages_per_range))
    unit = tables["documents"].column("doc_id")[0].as_py()
    out = stage.run(StageInput(unit, tables, root, cache=cache, page_map=pages))
    return out.tables["quote_texts"].to_pylist(), out.counts


def image_pages(tables: dict[str, pa.Table]) -> int:
    quotes = tables["quotes"].to_pylist()
    return len({q["page_idx"] for q in quotes if q["kind"] in CROPPED_KINDS and q["img_path"]})


def test_readings_spread_over_page_workers_give_the_rows_read_in_one_piece(
    parsed: tuple[Path, dict[str, pa.Table]], fresh_pools: None
) -> None:
    assert image_pages(parsed[1]) >= 3  # else one range per page is no spread
    whole, counts = describe(parsed, 1000, DictCache())
    assert counts["read"] == len(whole) > 0
    # one page per range, on two worker processes (the cache goes to them pickled: nothing is shared)
    spread, _ = describe(parsed, 1, DictCache(), page_map(2, limits=PageLimits(item_timeout_s=120)))
    assert spread == whole


def stopped_after(ranges: int) -> PageMap:
    """Runs the ranges inline, and the stop comes after the first `ranges` of them."""

    def mapped(fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        for done, item in enumerate(items):
            if done == ranges:
                raise interrupt.Interrupted("stopped for the test")
            yield fn(item)

    return mapped


def test_a_describe_cut_short_reads_only_the_ranges_it_had_not_read(parsed: tuple[Path, dict[str, pa.Table]]) -> None:
    images = [q for q in parsed[1]["quotes"].to_pylist() if q["kind"] in CROPPED_KINDS and q["img_path"]]
    first_pages = sorted({q["page_idx"] for q in images})[:2]
    in_first = sum(q["page_idx"] in first_pages for q in images)
    reference, _ = describe(parsed, 1, DictCache())
    cache = DictCache()
    with pytest.raises(interrupt.Interrupted):
        describe(parsed, 1, cache, stopped_after(2))
    rerun, counts = describe(parsed, 1, cache)
    assert 0 < in_first < len(reference)
    assert counts["read"] == len(reference) - in_first
    assert rerun == reference


def crashing_on(quote_id: str) -> PageMap:
    """Runs the ranges inline, but the worker of any range holding `quote_id` "crashes", every time."""

    def mapped(fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            at_fault = any(q["quote_id"] == quote_id for q in item.quotes)
            yield Lost("crashed", "worker process died (signal 9)") if at_fault else fn(item)

    return mapped


def test_a_range_lost_in_its_worker_loses_only_the_quote_at_fault_which_the_rerun_reads(
    parsed: tuple[Path, dict[str, pa.Table]],
) -> None:
    root, tables = parsed
    images = sorted(
        (q for q in tables["quotes"].to_pylist() if q["kind"] in CROPPED_KINDS and q["img_path"]),
        key=lambda q: (q["page_idx"], q["quote_id"]),
    )
    per_range = DescribeConfig().pages_per_range
    first_range = [q for q in images if q["page_idx"] in sorted({q["page_idx"] for q in images})[:per_range]]
    assert len(first_range) >= 3, "the culprit needs bystanders in its range"
    culprit = first_range[1]
    reference, _ = describe(parsed, per_range, DictCache())
    stage, cache = DescribeStage(DescribeConfig(pages_per_range=per_range)), DictCache()
    unit = tables["documents"].column("doc_id")[0].as_py()
    out = stage.run(StageInput(unit, tables, root, cache=cache, page_map=crashing_on(culprit["quote_id"])))
    rows = {r["quote_id"]: r for r in out.tables["quote_texts"].to_pylist()}
    reasons = {qid: reason for qid, reason in out.rejects if reason.startswith("ocr failed")}
    # the range was read again quote by quote: its other quotes were read, the culprit alone is lost
    assert list(reasons) == [culprit["quote_id"]], reasons
    assert f"page {culprit['page_idx'] + 1} did not end" in reasons[culprit["quote_id"]]
    assert "worker process died" in reasons[culprit["quote_id"]]
    by_id = {r["quote_id"]: r for r in reference}
    lost = rows[culprit["quote_id"]]
    assert lost["ocr_text"] is None and lost["png_sha256"] == by_id[culprit["quote_id"]]["png_sha256"]
    assert [r for r in rows.values() if r["quote_id"] != culprit["quote_id"]] == [
        r for r in reference if r["quote_id"] != culprit["quote_id"]
    ]
    # a lost reading is not cached: the rerun reads that quote only, and ends as the reference
    rerun, counts = describe(parsed, per_range, cache)
    assert counts["read"] == 1
    assert rerun == reference
