"""Page ranges saved as they complete, so that an interrupted parse resumes at the first missing one.

A parser spreads its pages in runs (`ChunkJob`, `parse.pages_per_chunk` pages each) through a
page map. `resumable` wraps that map: a run whose pages were all saved by an earlier attempt is
not run again, and each run that ends is saved at once (a `page_results` part of the document,
`<doc_id>.p<first>-<last>`) through the unit's checkpoint. What needs the whole document (the
section tree, running furniture, the index) still runs once every range is in, on the pages
read back from the checkpoint exactly as they were computed.

Saved: a page's result, or the reason the parser rejected it (MuPDF could not read it). Not
saved: a run lost to its worker (crashed, hung, over the memory cap) or to the document's time
limit: those are decided again on the rerun.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa

from interleaf.parse.chunks import ChunkJob
from interleaf.parse.protocol import PageRejected, PageResult, ParsedPage, ParsedQuote
from interleaf.stage import Checkpoint, Lost, PageMap
from warehouse import schemas

TABLE = "page_results"
PageOutcome = PageResult | PageRejected

_QUOTE_FIELDS = [f.name for f in schemas.PAGE_RESULT_QUOTE]


def to_rows(doc_id: str, results: list[PageOutcome]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for result in results:
        if isinstance(result, PageRejected):
            rows.append({"doc_id": doc_id, "page_idx": result.page_idx, "rejected": result.reason, "quotes": []})
            continue
        page = result.page
        rows.append(
            {
                "doc_id": doc_id,
                "page_idx": page.page_idx,
                "width": page.width,
                "height": page.height,
                "rotation": page.rotation,
                "has_text_layer": page.has_text_layer,
                "ocr_used": page.ocr_used,
                "quotes": [
                    {name: list(q.bbox) if name == "bbox" else getattr(q, name) for name in _QUOTE_FIELDS}
                    for q in result.quotes
                ],
            }
        )
    return pa.Table.from_pylist(rows, schema=schemas.PAGE_RESULTS)


def from_rows(table: pa.Table) -> dict[int, PageOutcome]:
    out: dict[int, PageOutcome] = {}
    for row in table.to_pylist():
        page_idx = row["page_idx"]
        if row["rejected"] is not None:
            out[page_idx] = PageRejected(page_idx, row["rejected"])
            continue
        page = ParsedPage(
            page_idx, row["width"], row["height"], row["rotation"], row["has_text_layer"], row["ocr_used"]
        )
        quotes = [ParsedQuote(page_idx=page_idx, **{**q, "bbox": tuple(q["bbox"])}) for q in row["quotes"]]
        out[page_idx] = PageResult(page, quotes)
    return out


def range_key(pages: tuple[int, ...]) -> str:
    return f"p{pages[0]:04d}-{pages[-1]:04d}"


class ResumeCount:
    """How many pages the last map found saved, for the stage's report."""

    def __init__(self) -> None:
        self.pages = 0


def resumable(page_map: PageMap, checkpoint: Checkpoint, doc_id: str, count: ResumeCount | None = None) -> PageMap:
    """`page_map`, skipping the runs of pages `checkpoint` holds and saving each run that ends.
    Items that are not runs of pages go through as they are."""

    def mapped(fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        items = list(items)
        saved: dict[int, PageOutcome] = {}
        for part in checkpoint.saved(TABLE):
            saved.update(from_rows(part))

        def done(item: Any) -> bool:
            return isinstance(item, ChunkJob) and all(p in saved for p in item.pages)

        fresh = iter(page_map(fn, [item for item in items if not done(item)]))
        for item in items:
            if done(item):
                if count is not None:
                    count.pages += len(item.pages)
                yield [saved[p] for p in item.pages]
                continue
            result = next(fresh)
            if isinstance(item, ChunkJob) and not isinstance(result, Lost):
                checkpoint.save(TABLE, range_key(item.pages), to_rows(doc_id, result))
            yield result

    return mapped
