"""Page-range parse (interleaf/parse/resume.py): each run of pages is saved as it ends, an
interrupted parse resumes at the first missing run, and ends identical to an uninterrupted one."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from interleaf.config import load_settings
from interleaf.parse.chunks import ChunkJob
from interleaf.parse.protocol import PageRejected, PageResult, ParsedPage, ParsedQuote
from interleaf.parse.resume import TABLE, from_rows, to_rows
from interleaf.parse.stage import ParseStage, SourceFile
from pipeline.context import RunContext, new_run_id
from pipeline.stage_task import Plan, UnitResult, run_unit
from warehouse import Warehouse

DOC = "docs/reliance-overview.pdf"  # 3 pages, a figure on each: runs of one page (parse.pages_per_chunk=1)
PAGES = 3
OUTPUTS = ("pages", "quotes", "sections", "documents")


class Killed(BaseException):
    """The process dying under the parse (kill -9, power cut): nothing catches it, nothing cleans up."""


class RecordingMap:
    """Plain `map` that records the pages of each run it was given, and dies after `stop_after` runs."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.pages: list[int] = []
        self.stop_after = stop_after

    def __call__(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        for n, item in enumerate(items):
            if self.stop_after is not None and n == self.stop_after:
                raise Killed
            assert isinstance(item, ChunkJob)
            self.pages += item.pages
            yield fn(item)


def _parse(root: Path, pdf: Path, page_map: RecordingMap) -> UnitResult:
    settings = load_settings(overrides=["parse.pages_per_chunk=1"])
    plan = Plan.of([ParseStage(settings.parse)])
    ctx = RunContext(new_run_id(), "ingest", str(root), settings)
    doc_id = hashlib.sha256(pdf.read_bytes()).hexdigest()
    return run_unit(ctx, plan, "parse", doc_id, source=SourceFile(str(pdf), doc_id), path=str(pdf), page_map=page_map)


def _stored(root: Path) -> dict[str, pa.Table]:
    wh = Warehouse(root)
    out = {}
    for table in OUTPUTS:
        (folder,) = (wh.root / table).glob("*/")
        out[table] = wh.read_table(table, folder.name)
    return out


def _crops(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "images").rglob("*.png"))}


def _checkpoint_parts(root: Path) -> list[Path]:
    return sorted((root / TABLE).glob("*/*.parquet"))


def test_an_interrupted_parse_resumes_at_the_first_missing_range(corpus: Path, tmp_path: Path) -> None:
    pdf = corpus / DOC
    reference = RecordingMap()
    assert _parse(tmp_path / "reference", pdf, reference).status == "ok"
    assert reference.pages == list(range(PAGES))

    cut = RecordingMap(stop_after=1)
    with pytest.raises(Killed):
        _parse(tmp_path / "resumed", pdf, cut)
    assert cut.pages == [0]
    saved = _checkpoint_parts(tmp_path / "resumed")
    assert [p.name.split(".")[1] for p in saved] == ["p0000-0000"]
    assert not list((tmp_path / "resumed").glob("documents/*/*.parquet")), "nothing committed"

    rerun = RecordingMap()
    result = _parse(tmp_path / "resumed", pdf, rerun)
    assert result.status == "ok"
    assert rerun.pages == [1, 2], "the rerun parsed a page the interrupted run had saved"
    assert result.counts["pages from an interrupted run"] == 1

    expected, got = _stored(tmp_path / "reference"), _stored(tmp_path / "resumed")
    for table in OUTPUTS:
        assert got[table].equals(expected[table]), table
    assert _crops(tmp_path / "resumed") == _crops(tmp_path / "reference")
    assert _crops(tmp_path / "reference"), "the document has figures: crops go through the checkpoint too"
    assert _checkpoint_parts(tmp_path / "resumed") == [], "a committed parse keeps no checkpoint"
    assert _checkpoint_parts(tmp_path / "reference") == []


def test_a_damaged_range_is_set_aside_and_parsed_again(corpus: Path, tmp_path: Path) -> None:
    pdf = corpus / DOC
    with pytest.raises(Killed):
        _parse(tmp_path, pdf, RecordingMap(stop_after=2))
    first = _checkpoint_parts(tmp_path)[0]
    data = bytearray(first.read_bytes())
    data[len(data) // 2] ^= 0x10
    first.write_bytes(bytes(data))

    rerun = RecordingMap()
    assert _parse(tmp_path, pdf, rerun).status == "ok"
    assert rerun.pages == [0, 2]
    assert list((tmp_path / "_corrupt").rglob("*.parquet.*")), "the damaged range was set aside for a look"


def test_saved_pages_read_back_as_they_were_computed() -> None:
    page = ParsedPage(3, 612.0, 792.0, 90, True, False)
    figure = ParsedQuote(3, "figure", (1.5, 2.25, 300.125, 400.0), "", "none", "Fig. 2", score=0.87, png=b"\x89PNG")
    text = ParsedQuote(3, "text", (0.1, 0.2, 0.3, 0.4), "Körper − 0.5896", "text_layer", score=None)
    results = [PageResult(page, [figure, text]), PageRejected(4, "damaged page, cannot be parsed: cycle in page tree")]
    back = from_rows(to_rows("d" * 64, results))
    assert back == {3: results[0], 4: results[1]}
