"""The describe stage as a pure function: a document's image quotes in, `quote_texts` rows out.

Each image quote (figure, table, equation) gets the three text forms MMDocRAG keeps beside the
image (§2.1): OCR-text (from the text layer when the box holds vector text, else OCR), a Markdown
table for tables, and VLM-text from the configured describer. Every field carries its source.

Work is cached per quote *content*, in two levels, through the `Cache` passed in:
  - the reading (OCR-text, table) under a key of the crop's bytes, the box's vector words and the
    OCR config: a re-parse that yields the same crops reads nothing again. Readings are made by
    page range, spread over the page workers (describe/reading.py);
  - the description under a key of the reading, caption, references and describer config:
    switching describer re-runs only the describer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from interleaf.describe.config import DescribeConfig
from interleaf.describe.offline_describer import referring_sentences
from interleaf.describe.protocol import Describer, DescribeRequest
from interleaf.describe.reading import (
    Reading,
    ReadingSettings,
    ReadJob,
    content_hash,
    lost_reading,
    page_ranges,
    read_range,
)
from interleaf.kinds import PROSE_KINDS
from interleaf.stage import ContentCache, Lost, StageInput, StageOutput, map_isolating_faults, source_digest
from interleaf.text.references import caption_label
from interleaf.versions import package_versions
from interleaf.vlm.openai_chat import ModelServerError
from warehouse import schemas

STAGE = "describe"


class DictCache:
    """In-memory Cache, for tests and benchmarks."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], dict[str, Any]] = {}

    def get(self, namespace: str, key: str) -> dict[str, Any] | None:
        return self.data.get((namespace, key))

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        self.data[(namespace, key)] = value


@dataclass
class DescribeOutput:
    quote_texts: pa.Table
    rejects: list[tuple[str | None, str]] = field(default_factory=list)  # (quote_id, reason)
    described: int = 0  # quotes described in this call, not from cache
    server_failures: list[str] = field(default_factory=list)  # errors of requests the model server failed


def describe_document(
    quotes: list[dict[str, Any]],
    images: dict[str, bytes],
    readings: Mapping[str, Reading],
    describer: Describer,
    describer_fingerprint: str,
    cache: ContentCache,
    ocr_name: str,
    kinds: Sequence[str] = ("figure", "table", "equation"),
    max_references: int = 3,
) -> DescribeOutput:
    """Describe every image quote of one document, from its readings (describe/reading.py).

    quotes: the document's `quotes` rows (all kinds: text quotes supply the references);
    images: quote_id -> PNG crop bytes; readings: quote_id -> its reading; ocr_name: the engine
    named in the reject of a quote nothing could be read from.
    """
    texts = [q["text"] for q in quotes if q["kind"] in PROSE_KINDS and not q.get("furniture") and q.get("text")]
    targets = [q for q in quotes if q["kind"] in kinds and q["quote_id"] in images]
    out = DescribeOutput(schemas.empty("quote_texts"))
    rows, requests, pending = [], [], []
    for q in targets:
        qid, png = q["quote_id"], images[q["quote_id"]]
        reading = readings[qid]
        got = reading.values
        refs = referring_sentences(caption_label(q.get("caption")), texts, max_references)
        request = DescribeRequest(
            quote_id=qid,
            kind=q["kind"],
            page_idx=q["page_idx"],
            png=png,
            caption=q.get("caption"),
            ocr_text=got["ocr_text"],
            ocr_source=got["ocr_source"],
            table_md=got["table_md"],
            references=tuple(refs),
        )
        # a lost reading has no key: its description is neither looked up nor kept; the table
        # Markdown is made from the reading anew each time (a new table reader), so it is in the key
        desc_key = reading.key and content_hash(
            [reading.key, got["table_md"], q.get("caption"), refs, q["kind"], q["page_idx"], describer_fingerprint]
        )
        row = {"quote_id": qid, "doc_id": q["doc_id"], "page_idx": q["page_idx"], "kind": q["kind"]}
        row |= {k: v for k, v in got.items() if k != "ocr_error"}
        row |= {"png_sha256": reading.png_sha256, "content_key": desc_key or None}
        if got["ocr_error"]:
            out.rejects.append((qid, f"ocr failed: {got['ocr_error']}"))
        elif not got["ocr_text"]:
            out.rejects.append((qid, f"ocr: no text found in the {q['kind']} (text layer and {ocr_name})"))
        if q["kind"] == "table" and not got["table_md"]:
            out.rejects.append((qid, "table structure: no words to build a Markdown table from"))
        described = cache.get("describe", desc_key) if desc_key else None
        if described is None:
            requests.append(request)
            pending.append((row, desc_key))
        else:
            row |= described
        rows.append(row)

    for (row, key), desc in zip(pending, describer.describe(requests) if requests else [], strict=True):
        if desc.server_failed:  # not the quote's fault: no reject, and the document is not stored
            out.server_failures.append(desc.error or "failed")
            continue
        value = {
            "vlm_text": desc.text.strip() if desc.text and desc.text.strip() else None,
            "vlm_sources": ",".join(desc.sources) or None,
        }
        out.described += 1
        if value["vlm_text"] is None:
            out.rejects.append((row["quote_id"], f"describe ({describer.name}): {desc.error or 'empty description'}"))
        elif key:
            cache.put("describe", key, value)
        row |= value
    for row in rows:
        row |= {"describer": describer.name, "model": describer.model, "prompt_hash": describer.prompt_hash}
    out.quote_texts = schemas.check("quote_texts", pa.Table.from_pylist(rows, schema=schemas.QUOTE_TEXTS))
    return out


def read_by_range(
    given: StageInput,
    targets: list[dict[str, Any]],
    job: Callable[[tuple[int, ...], list[dict[str, Any]]], ReadJob],
    pages_per_range: int,
) -> dict[str, Reading]:
    """Each target's reading (its crop is stored), its pages' runs spread over the stage's page map
    (describe/reading.py). A range that did not end is read again one quote at a time, which finds
    the quote at fault: only its reading is lost, the others stand (`map_isolating_faults`)."""
    ranges = [job(pages, quotes) for pages, quotes in page_ranges(targets, pages_per_range)]
    readings: dict[str, Reading] = {}

    def singles(range_job: ReadJob) -> list[ReadJob]:
        return [job((q["page_idx"],), [q]) for q in range_job.quotes]

    for range_job, result in map_isolating_faults(read_range, ranges, given.page_map, singles):
        if isinstance(result, Lost):
            first, last = range_job.pages[0] + 1, range_job.pages[-1] + 1
            pages = f"page {first}" if first == last else f"pages {first}-{last}"
            reason = f"the reading of {pages} did not end: {result.reason}"
            readings |= {q["quote_id"]: lost_reading(q["png_sha256"], reason) for q in range_job.quotes}
        else:
            readings |= result
    return readings


class DescribeStage:
    """A document's image quotes -> `quote_texts` (OCR-text, table Markdown, VLM-text)."""

    name = STAGE
    unit = "document"
    page_work = True  # its runs of pages go to the page workers (flows/page_work.py)
    inputs = ("documents", "pages", "quotes")
    outputs = ("quote_texts",)
    upstream = ("parse",)
    sources = ("interleaf.describe", "interleaf.pdf", "interleaf.text", "interleaf.kinds", "interleaf.vlm")
    retries = 1
    retry_on: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, config: DescribeConfig) -> None:
        from interleaf.describe.registry import get_describer, get_ocr_engine, prompt_hashes

        self.settings = config
        self.ocr = get_ocr_engine(config.ocr)
        self.describer = get_describer(config)
        self._prompts = prompt_hashes(config)

    def config(self) -> dict[str, Any]:
        return {**self.settings.fingerprint_config(), "engine": self.ocr.fingerprint_config()}

    def prompt_hashes(self) -> list[str]:
        return self._prompts

    def version(self) -> dict[str, str]:
        engines = {"rapidocr": ("rapidocr", "onnxruntime"), "paddleocr": ("paddleocr",)}[self.settings.ocr.backend]
        model = {"describer_model": self.describer.model} if self.describer.model else {}
        return {**package_versions(("pymupdf", *engines)), **model}

    def namespaces(self) -> dict[str, str]:
        """Content-cache namespaces: a reading is reused while the OCR side is unchanged, a
        description while the describer side is unchanged, whatever else moves."""
        code = source_digest(tuple(self.sources))
        read = {"ocr": self.settings.ocr_fingerprint(), "engine": self.ocr.fingerprint_config(), "code": code}
        read |= package_versions(("rapidocr", "paddleocr", "pymupdf"))
        describe = {"describer": self.settings.describer_fingerprint(), "prompts": self._prompts, "code": code}
        describe |= {"model": self.describer.model or ""}
        return {"read": content_hash(read)[:16], "describe": content_hash(describe)[:16]}

    def run(self, given: StageInput) -> StageOutput:
        config = self.settings
        quotes = given.tables["quotes"].to_pylist()
        document = given.tables["documents"].to_pylist()[0]
        pages = {p["page_idx"]: p for p in given.tables["pages"].to_pylist()}
        targets = [q for q in quotes if q["kind"] in config.kinds and q["img_path"]]
        crops = {q["quote_id"]: given.root / q["img_path"] for q in targets}
        images = {qid: path.read_bytes() for qid, path in crops.items() if path.exists()}
        spaces = self.namespaces()
        settings = ReadingSettings(
            spaces["read"], config.ocr.min_conf, config.ocr.min_vector_words, config.ocr.max_raster_share
        )
        cache = NamespacedCache(given.cache or DictCache(), spaces)

        def job(run: tuple[int, ...], on_pages: list[dict[str, Any]]) -> ReadJob:
            fields = ("quote_id", "kind", "page_idx", "bbox")
            return ReadJob(
                pdf_path=document["path"],
                pages=run,
                quotes=tuple({f: q[f] for f in fields} | {"png_sha256": crop_hashes[q["quote_id"]]} for q in on_pages),
                page_rows={p: pages.get(p, {}) for p in run},
                dpi=config.ocr.dpi,
                ocr=self.ocr,
                settings=settings,
                cache=cache,
            )

        crop_hashes = {qid: hashlib.sha256(png).hexdigest() for qid, png in images.items()}
        present = [q for q in targets if q["quote_id"] in images]
        readings = read_by_range(given, present, job, config.pages_per_range)
        out = describe_document(
            quotes,
            images,
            readings,
            self.describer,
            spaces["describe"],
            cache,
            self.ocr.name,
            kinds=config.kinds,
            max_references=config.max_references,
        )
        if out.server_failures:
            # the descriptions it did give are cached: a rerun asks for the failed ones only
            failed = out.server_failures
            raise ModelServerError(config.openai.base_url, len(failed), out.described + len(failed), failed[0])
        rejects = out.rejects + [(qid, "describe: crop file missing") for qid in crops if qid not in images]
        read = sum(r.fresh for r in readings.values())
        counts = {"quotes": out.quote_texts.num_rows, "read": read, "described": out.described}
        return StageOutput({"quote_texts": out.quote_texts}, rejects=rejects, counts=counts)


class NamespacedCache:
    """Files each cached value under its namespace's fingerprint: `read/<fp>`, `describe/<fp>`."""

    def __init__(self, inner: ContentCache, fingerprints: dict[str, str]) -> None:
        self.inner, self.fingerprints = inner, fingerprints

    def get(self, namespace: str, key: str) -> dict[str, Any] | None:
        return self.inner.get(f"{namespace}/{self.fingerprints[namespace]}", key)

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        self.inner.put(f"{namespace}/{self.fingerprints[namespace]}", key, value)
