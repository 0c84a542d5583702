"""What parse reads of a document as a whole before and after its pages: that it opens (bad input
fails here, with its reason), its page count, its metadata title and its outline.

Read through the page map, like the pages: on `local` in a page worker, so the command's process
never imports PyMuPDF (interleaf/pdf/mupdf.py); inline where the map is `map`.
"""

from __future__ import annotations

from dataclasses import dataclass

from interleaf.errors import DocumentError
from interleaf.pdf.document import page_count_and_title
from interleaf.stage import Lost, PageMap
from interleaf.structure.outline import OutlineEntry, read_outline


@dataclass(frozen=True)
class DocumentFacts:
    page_count: int
    title: str | None  # the metadata's, when it is a title (pdf/document.py metadata_title)
    outline: tuple[OutlineEntry, ...]


@dataclass(frozen=True)
class FactsJob:
    pdf: bytes
    name: str


def read_facts(job: FactsJob) -> DocumentFacts | DocumentError:
    """Module-level, for the page workers. A file that cannot be parsed gives its DocumentError,
    returned rather than raised: one bad file among those read in one map does not end the map."""
    try:
        page_count, title = page_count_and_title(job.pdf, job.name)
    except DocumentError as exc:
        return exc
    return DocumentFacts(page_count, title, tuple(read_outline(job.pdf)))


def facts_of(jobs: list[FactsJob], page_map: PageMap = map) -> list[DocumentFacts | DocumentError]:
    """Each job's facts, or why its file cannot be parsed, in the order of `jobs`."""
    out: list[DocumentFacts | DocumentError] = []
    for job, result in zip(jobs, page_map(read_facts, jobs), strict=True):
        if isinstance(result, Lost):  # its worker died or hung on it: the file is at fault
            result = DocumentError(job.name, f"cannot be opened: {result.reason}")
        out.append(result)
    return out


def document_facts(pdf: bytes, name: str, page_map: PageMap = map) -> DocumentFacts:
    """One document's facts; a DocumentError when its file cannot be parsed."""
    (result,) = facts_of([FactsJob(pdf, name)], page_map)
    if isinstance(result, DocumentError):
        raise result
    return result
