"""What parse reads of a document as a whole, before and after its pages: that it opens (bad input
fails here, with its reason), its page count, its metadata title and its outline.

An ingest reads them before its flow, in a page worker (flows/runner.py), so that the command's
process never imports PyMuPDF (interleaf/pdf/mupdf.py), and hands them to parse with the file.
Read there rather than in the parse unit: a unit's job would queue behind the other document's runs
of pages in the shared pool, with the time of one page to wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from interleaf.errors import DocumentError
from interleaf.pdf.document import page_count_and_title
from interleaf.stage import Lost, PageMap
from interleaf.structure.outline import OutlineEntry, read_outline


@dataclass(frozen=True)
class DocumentFacts:
    page_count: int
    title: str | None  # the metadata's, when it is a title (pdf/document.py metadata_title)
    outline: tuple[OutlineEntry, ...]


def document_facts(pdf: bytes, name: str) -> DocumentFacts:
    """A DocumentError when the file cannot be parsed."""
    page_count, title = page_count_and_title(pdf, name)
    return DocumentFacts(page_count, title, tuple(read_outline(pdf)))


def read_facts(path: str) -> DocumentFacts | DocumentError:
    """Module-level, for the page workers; the worker reads the file, so the caller never holds a
    corpus's bytes. Why a file cannot be parsed is returned rather than raised: one bad file among
    those read in one map does not end the map."""
    try:
        return document_facts(Path(path).read_bytes(), Path(path).name)
    except OSError as exc:
        return DocumentError(path, f"cannot read the file: {exc}")
    except DocumentError as exc:
        return exc


def facts_of(paths: list[str], page_map: PageMap = map) -> list[DocumentFacts | DocumentError]:
    """Each file's facts, or why it cannot be parsed, in the order of `paths`."""
    out: list[DocumentFacts | DocumentError] = []
    for path, result in zip(paths, page_map(read_facts, paths), strict=True):
        if isinstance(result, Lost):  # its worker died, hung or ran out of memory on it: the file is at fault
            result = DocumentError(path, f"cannot be opened: {result.reason}")
        out.append(result)
    return out
