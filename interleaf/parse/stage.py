"""The parse stage as a pure function: a document's bytes in, Arrow tables and crop files out."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from interleaf.errors import DocumentError, StageError, WarehouseWriteError
from interleaf.kinds import AS_PRINTED_KINDS
from interleaf.parse.config import LimitsConfig, ParseConfig
from interleaf.parse.facts import DocumentFacts, document_facts
from interleaf.parse.protocol import ParsedDocument, ParsedQuote, Parser
from interleaf.parse.resume import ResumeCount, resumable
from interleaf.stage import PageMap, StageInput, StageOutput
from interleaf.structure import PARSE_MODULES
from interleaf.structure.furniture import running_furniture
from interleaf.structure.outline import OutlineEntry, read_outline
from interleaf.structure.sections import build_sections
from interleaf.structure.title import document_title
from interleaf.text.hyphens import join_broken_words, vocabulary
from interleaf.versions import package_versions
from warehouse import schemas

STAGE = "parse"


@dataclass(frozen=True)
class SourceFile:
    """A document to parse: its file, the SHA-256 of its bytes that names it, and its facts when they
    were read before the flow (flows/runner.py reads them in a page worker), or why the file cannot be
    parsed; None: parse reads them."""

    path: str
    doc_id: str
    facts: DocumentFacts | DocumentError | None = None


@dataclass(frozen=True)
class DocumentInput:
    doc_id: str  # SHA-256 of the bytes
    name: str
    path: str
    data: bytes


@dataclass
class ParseOutput:
    documents: pa.Table
    pages: pa.Table
    quotes: pa.Table
    rejects: list[tuple[str | None, str]] = field(default_factory=list)  # (quote_id, reason)
    files: dict[str, bytes] = field(default_factory=dict)  # path under the warehouse -> bytes
    sections: pa.Table = field(default_factory=lambda: schemas.empty("sections"))  # set by `with_structure`

    @property
    def page_count(self) -> int:
        return self.pages.num_rows


def quote_id(doc_id: str, page_idx: int, layout_idx: int) -> str:
    """Stable across reruns: the document's content hash, the page and the reading position."""
    return f"{doc_id[:16]}-p{page_idx:04d}-q{layout_idx:03d}"


def image_relpath(fingerprint: str, doc_id: str, qid: str) -> str:
    return f"images/{fingerprint}/{doc_id[:16]}/{qid}.png"


def mended_text(q: ParsedQuote, words: Counter[str]) -> tuple[str, str | None, list[dict[str, Any]]]:
    """A quote's text and caption with the words broken across lines by a hyphen made whole, by the
    document's own `words` (interleaf/text/hyphens.py), and the `line_break_hyphens` saying which."""
    text, caption, mended = q.text, q.caption, []
    if q.kind not in AS_PRINTED_KINDS:
        text, broken = join_broken_words(text, words)
        mended += [{"column": "text", "word": b.word, "hyphen_kept": b.hyphen_kept} for b in broken]
    if caption:
        caption, broken = join_broken_words(caption, words)
        mended += [{"column": "caption", "word": b.word, "hyphen_kept": b.hyphen_kept} for b in broken]
    return text, caption, mended


def to_tables(
    doc: DocumentInput, parsed: ParsedDocument, backend: str, fingerprint: str, outline: Sequence[OutlineEntry] = ()
) -> ParseOutput:
    quotes, files = [], {}
    per_page: dict[int, int] = {}
    # the whole document's words, as printed: a word broken at a line's end is joined or keeps its
    # hyphen by how the document writes it elsewhere
    words = vocabulary(t for q in parsed.quotes for t in (q.text, q.caption, q.footnote))
    for q in parsed.quotes:
        layout_idx = per_page.get(q.page_idx, 0)
        per_page[q.page_idx] = layout_idx + 1
        qid = quote_id(doc.doc_id, q.page_idx, layout_idx)
        img_path = None
        if q.png:
            img_path = image_relpath(fingerprint, doc.doc_id, qid)
            files[img_path] = q.png
        text, caption, mended = mended_text(q, words)
        quotes.append(
            {
                "quote_id": qid,
                "doc_id": doc.doc_id,
                "page_idx": q.page_idx,
                "layout_idx": layout_idx,
                "kind": q.kind,
                "bbox": [float(v) for v in q.bbox],
                "text": text,
                "text_source": q.text_source,
                "line_break_hyphens": mended,
                "caption": caption,
                "footnote": q.footnote,
                "html": q.html,
                "img_path": img_path,
                "furniture": q.furniture,
                "backend": backend,
                "score": q.score,
            }
        )
    pages = [
        {
            "doc_id": doc.doc_id,
            "page_idx": p.page_idx,
            "width": p.width,
            "height": p.height,
            "rotation": p.rotation,
            "has_text_layer": p.has_text_layer,
            "ocr_used": p.ocr_used,
            "n_quotes": per_page.get(p.page_idx, 0),
        }
        for p in parsed.pages
    ]
    documents = [
        {
            "doc_id": doc.doc_id,
            "name": doc.name,
            "path": doc.path,
            "pages": parsed.page_count,
            "bytes": len(doc.data),
            "title": document_title(parsed.title, outline, parsed.page_title),
        }
    ]
    rejects: list[tuple[str | None, str]] = [
        (None, f"page {page_idx + 1}: {reason}") for page_idx, reason in parsed.page_rejects
    ] + [(None, reason) for reason in parsed.range_rejects]
    return ParseOutput(
        documents=schemas.check("documents", pa.Table.from_pylist(documents, schema=schemas.DOCUMENTS)),
        pages=schemas.check("pages", pa.Table.from_pylist(pages, schema=schemas.PAGES)),
        quotes=schemas.check("quotes", pa.Table.from_pylist(quotes, schema=schemas.QUOTES)),
        rejects=rejects,
        files=files,
    )


def nothing_found(out: ParseOutput) -> str:
    """Why a document whose every page read as blank, none rejected, is rejected (a damaged file
    MuPDF repaired may read so). Pages rejected explain themselves: their document is kept with
    its rejects."""
    pages = out.documents.column("pages")[0].as_py()
    return f"nothing found: no text, figure or table on any of its {pages} page{'s' if pages != 1 else ''}"


def over_limits(size: int, page_count: Callable[[], int], limits: LimitsConfig) -> str | None:
    """Why a file is refused before any page work (`parse.limits.max_file_mb`, `max_pages`), or
    None. `page_count` is called only when the size passes: a huge file is not read to count."""
    mb = size / 2**20
    if limits.max_file_mb is not None and mb > limits.max_file_mb:
        return f"file too large: {mb:.1f} MB, over parse.limits.max_file_mb={limits.max_file_mb:g}"
    if limits.max_pages is not None and (pages := page_count()) > limits.max_pages:
        return f"too many pages: {pages}, over parse.limits.max_pages={limits.max_pages}"
    return None


def parse_document(
    doc: DocumentInput, parser: Parser, fingerprint: str, page_map: PageMap = map, facts: DocumentFacts | None = None
) -> ParseOutput:
    """Parse one document. A DocumentError (bad input) propagates for the caller to record as a
    reject, and a WarehouseWriteError (a range of pages saved to a full disk) stops the ingest;
    anything else is wrapped in a StageError naming the document."""
    try:
        parsed = parser.parse(doc.data, doc.name, page_map, facts)
    except (DocumentError, WarehouseWriteError):
        raise
    except Exception as exc:
        raise StageError(STAGE, f"{doc.name} ({doc.doc_id[:16]})", exc) from exc
    outline = list(parsed.outline) if parsed.outline is not None else read_outline(doc.data)
    return with_structure(to_tables(doc, parsed, parser.name, fingerprint, outline), doc.doc_id, outline)


def with_structure(out: ParseOutput, doc_id: str, outline: list[OutlineEntry]) -> ParseOutput:
    """The section tree (outline, numbered headings, running headers), each quote's place in it, and
    the running heads and feet the parser kept as content marked as furniture (interleaf.structure)."""
    quotes, pages = out.quotes.to_pylist(), out.pages.to_pylist()
    title = out.documents.column("title")[0].as_py() if out.documents.num_rows else None
    rows, section_of = build_sections(doc_id, outline, quotes, pages, title)
    path = {r["section_id"]: r["path"] for r in rows}
    running = running_furniture(quotes, pages)
    for q in quotes:
        q["section_id"] = section_of[q["quote_id"]]
        q["section_path"] = path[q["section_id"]]
        q["furniture"] = q["furniture"] or q["quote_id"] in running
    out.quotes = schemas.check("quotes", pa.Table.from_pylist(quotes, schema=schemas.QUOTES))
    out.sections = schemas.check("sections", pa.Table.from_pylist(rows, schema=schemas.SECTIONS))
    return out


# What each parse backend runs beyond this package's source: its engines' releases.
ENGINES = {
    "layout": ("pymupdf", "rapid-layout", "rapidocr", "onnxruntime"),
    "mineru": ("pymupdf", "mineru"),
    "content_list": ("pymupdf",),
}


class ParseStage:
    """A document (its file) -> documents, pages, quotes and crops."""

    name = STAGE
    unit = "document"
    page_work = True  # its runs of pages go to the page workers (flows/page_work.py)
    inputs: tuple[str, ...] = ()
    outputs = ("pages", "quotes", "sections", "documents")  # `documents` last: it commits the others
    upstream: tuple[str, ...] = ()
    sources = (
        "interleaf.parse",
        "interleaf.pdf",
        "interleaf.text",
        "interleaf.kinds",
        *PARSE_MODULES,
        "interleaf.evidence",
    )
    retries = 1
    retry_on: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, config: ParseConfig) -> None:
        self.settings = config
        self.parser = get_parser(config)

    def config(self) -> dict[str, Any]:
        # the limits decide which documents and pages are stored (interleaf/parse/config.py)
        return {
            "backend": self.parser.name,
            **self.parser.fingerprint_config(),
            "limits": self.settings.limits.model_dump(),
        }

    def prompt_hashes(self) -> list[str]:
        return []

    def version(self) -> dict[str, str]:
        return package_versions(ENGINES.get(self.parser.name, ()))

    def run(self, given: StageInput) -> StageOutput:
        source: SourceFile = given.source
        path = Path(source.path)
        if isinstance(source.facts, DocumentError):  # found before the flow: the file is not read again
            raise DocumentError(source.path, source.facts.reason, source.doc_id)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DocumentError(source.path, f"cannot read the file: {exc}", source.doc_id) from exc
        known = source.facts
        facts = functools.cache(lambda: known or document_facts(data, path.name))
        # here as well as before the flow (flows/runner.py): however parse is reached, they hold
        if reason := over_limits(len(data), lambda: facts().page_count, self.settings.limits):
            raise DocumentError(source.path, reason, source.doc_id)
        doc = DocumentInput(source.doc_id, path.name, str(path.resolve()), data)
        resumed = ResumeCount()
        page_map = given.page_map
        if given.checkpoint is not None:  # each range of pages saved as it ends; a rerun skips those saved
            page_map = resumable(page_map, given.checkpoint, source.doc_id, resumed)
        out = parse_document(doc, self.parser, given.fingerprint, page_map, facts())
        if out.quotes.num_rows == 0 and not out.rejects:  # stored, nothing could be found in it, with no word of why
            raise DocumentError(source.path, nothing_found(out), source.doc_id)
        return StageOutput(
            {"pages": out.pages, "quotes": out.quotes, "sections": out.sections, "documents": out.documents},
            rejects=out.rejects,
            files=out.files,
            counts={
                "pages": out.page_count,
                "quotes": out.quotes.num_rows,
                "sections": out.sections.num_rows,
                **({"pages from an interrupted run": resumed.pages} if resumed.pages else {}),
            },
        )


def get_parser(config: ParseConfig) -> Parser:
    from interleaf.parse.registry import get_parser as by_name

    return by_name(config)
