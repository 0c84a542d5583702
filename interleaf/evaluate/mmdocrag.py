"""MMDocRAG's dataset format, in and out.

One question a line (MMDocRAG's dataset/README.md): `q_id`, `doc_name`, `domain`, `question`,
`question_type`, `evidence_modality_type`, `text_quotes`, `img_quotes`, `gold_quotes`, `answer_short`,
`answer_interleaved` (some lines add `old_id`: kept and written back). A quote has `quote_id`, `type`,
`text` (text quotes), `img_path` and `img_description` (image quotes), `page_id` (0-based), `layout_id`.
A 15-quote context is 10 text + 5 image quotes, a 20-quote one 12 + 8 (MMDocRAG §3).

Numbering: a quote's number is its 1-based position in its own list, the way MMDocRAG's inference code
numbers the prompt (`[i]` for text, `imageN` for images) and its scorer reads gold labels (`text3` is
the third text quote). The id a quote gets in our `AnswerRequest` is that positional label, so cited ids
and gold ids compare directly. The label a line writes is kept too (`MMDocRAGQuote.label`).

`img_path` is relative to the folder the images were unpacked into (`images_root`); an image that is not
there under its path is looked up by file name directly under the root (images.zip is one flat folder).
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interleaf.errors import InterleafError
from interleaf.evaluate.breakdowns import EvidenceFacts
from interleaf.generate.protocol import AnswerRequest, ContextQuote, ImageLoader, InputMode, Modality
from interleaf.kinds import IMAGE_KINDS
from interleaf.pdf.mupdf import pymupdf

_GOLD_LABEL = re.compile(r"^(text|image)(\d+)$")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class MMDocRAGError(InterleafError):
    pass


@dataclass(frozen=True)
class LineReject:
    path: str
    line: int  # 1-based
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class MMDocRAGQuote:
    modality: Modality  # from the list it is in: text_quotes or img_quotes
    number: int  # 1-based position in that list
    label: str  # `quote_id` as the line writes it
    type: str  # as written: text, image, table, ...
    page_id: int  # 0-based
    layout_id: int
    text: str = ""  # text quotes
    img_path: str | None = None  # image quotes, relative to the images root
    img_description: str = ""  # image quotes: the VLM-text

    @property
    def context_id(self) -> str:
        return f"{self.modality}{self.number}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"quote_id": self.label, "type": self.type}
        if self.modality == "text":
            out["text"] = self.text
        else:
            out["img_path"] = self.img_path
            out["img_description"] = self.img_description
        out["page_id"] = self.page_id
        out["layout_id"] = self.layout_id
        return out


@dataclass(frozen=True)
class MMDocRAGItem:
    q_id: int | str
    doc_name: str
    domain: str
    question: str
    question_type: str
    evidence_modality_type: tuple[str, ...]
    text_quotes: tuple[MMDocRAGQuote, ...]
    img_quotes: tuple[MMDocRAGQuote, ...]
    gold_quotes: tuple[str, ...]  # positional ids ("text3", "image2"), in the line's order
    answer_short: str
    answer_interleaved: str
    source: str = ""  # "file:line" it was read from
    extra: Mapping[str, Any] = field(default_factory=dict)  # other keys of the line, written back as read

    @property
    def question_id(self) -> str:
        return str(self.q_id)

    @property
    def quotes(self) -> tuple[MMDocRAGQuote, ...]:
        """Text quotes, then image quotes: the prompt's order and §4.6's positions (1-12 text, 13-20 image)."""
        return self.text_quotes + self.img_quotes

    @property
    def gold_text_ids(self) -> tuple[str, ...]:
        return tuple(g for g in self.gold_quotes if g.startswith("text"))

    @property
    def gold_image_ids(self) -> tuple[str, ...]:
        return tuple(g for g in self.gold_quotes if g.startswith("image"))

    def quote(self, context_id: str) -> MMDocRAGQuote:
        return next(q for q in self.quotes if q.context_id == context_id)

    def facts(self) -> EvidenceFacts:
        gold = [self.quote(g) for g in self.gold_quotes]
        return EvidenceFacts(
            doc_name=self.doc_name,
            question_type=self.question_type or None,
            evidence_types=EvidenceFacts.normalise_types(self.evidence_modality_type),
            gold_pages=frozenset((self.doc_name, q.page_id) for q in gold),
            gold_modalities=frozenset(q.modality for q in gold),
            n_gold_images=sum(q.modality == "image" for q in gold),
        )

    def request(self, mode: InputMode = "text", images_root: Path | None = None) -> AnswerRequest:
        """The fixed context as an AnswerRequest. Image quotes carry their img_description as text (the
        pure-text setting, Appendix C.1); in multimodal mode every crop must exist under `images_root`."""
        if mode == "multimodal":
            if images_root is None:
                raise MMDocRAGError(f"{self.source}: multimodal mode needs the images folder")
            for q in self.img_quotes:
                if resolve_image(images_root, q.img_path) is None:
                    raise MMDocRAGError(f"{self.source}: {q.label}: image {q.img_path} not found under {images_root}")
        return AnswerRequest(self.question_id, self.question, tuple(self._context_quote(q) for q in self.quotes))

    def _context_quote(self, q: MMDocRAGQuote) -> ContextQuote:
        if q.modality == "text":
            kind = q.type if q.type not in IMAGE_KINDS else "text"
            return ContextQuote(q.context_id, "text", q.number, self.doc_name, self.doc_name, q.page_id, kind, q.text)
        kind = q.type if q.type in IMAGE_KINDS else "image"
        return ContextQuote(
            q.context_id,
            "image",
            q.number,
            self.doc_name,
            self.doc_name,
            q.page_id,
            kind,
            q.img_description,
            img_path=q.img_path,
            vlm_text=q.img_description or None,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "q_id": self.q_id,
            "doc_name": self.doc_name,
            "domain": self.domain,
            "question": self.question,
            "evidence_modality_type": list(self.evidence_modality_type),
            "question_type": self.question_type,
            "text_quotes": [q.to_json() for q in self.text_quotes],
            "img_quotes": [q.to_json() for q in self.img_quotes],
            "gold_quotes": list(self.gold_quotes),
            "answer_short": self.answer_short,
            "answer_interleaved": self.answer_interleaved,
        }
        return {**out, **{k: v for k, v in self.extra.items() if k not in out}}


# -- reading -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MMDocRAGFile:
    path: Path
    images_root: Path  # what the items' img_path is relative to
    items: list[MMDocRAGItem]
    rejects: list[LineReject]  # one per malformed line; the other lines are read


class _Malformed(Exception):
    pass


def _need(raw: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    if key not in raw:
        raise _Malformed(f"{where}missing field {key!r}")
    value = raw[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _Malformed(f"{where}field {key!r} is {type(value).__name__}, expected {_names(kind)}")
    return value


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))


def _optional_str(raw: Mapping[str, Any], key: str, where: str = "") -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Malformed(f"{where}field {key!r} is {type(value).__name__}, expected str")
    return value


def _parse_quote(raw: Any, modality: Modality, number: int) -> MMDocRAGQuote:
    where = f"{'text_quotes' if modality == 'text' else 'img_quotes'}[{number - 1}]: "
    if not isinstance(raw, dict):
        raise _Malformed(f"{where}not an object")
    common = {
        "modality": modality,
        "number": number,
        "label": _need(raw, "quote_id", str, where),
        "type": _optional_str(raw, "type", where) or modality,
        "page_id": _need(raw, "page_id", int, where),
        "layout_id": _need(raw, "layout_id", int, where),
    }
    if modality == "text":
        return MMDocRAGQuote(**common, text=_need(raw, "text", str, where))
    return MMDocRAGQuote(
        **common,
        img_path=_need(raw, "img_path", str, where),
        img_description=_optional_str(raw, "img_description", where),
    )


_KNOWN = frozenset(
    {
        "q_id",
        "doc_name",
        "domain",
        "question",
        "evidence_modality_type",
        "question_type",
        "text_quotes",
        "img_quotes",
        "gold_quotes",
        "answer_short",
        "answer_interleaved",
    }
)


def _parse_item(raw: Any, source: str) -> MMDocRAGItem:
    if not isinstance(raw, dict):
        raise _Malformed(f"a line must be a JSON object, got {type(raw).__name__}")
    text_quotes = tuple(_parse_quote(q, "text", i) for i, q in enumerate(_need(raw, "text_quotes", list), start=1))
    img_quotes = tuple(_parse_quote(q, "image", i) for i, q in enumerate(_need(raw, "img_quotes", list), start=1))
    gold = _need(raw, "gold_quotes", list)
    for label in gold:
        match = _GOLD_LABEL.match(label) if isinstance(label, str) else None
        if match is None:
            raise _Malformed(f"gold quote {label!r} is not textN or imageN")
        size = len(text_quotes) if match[1] == "text" else len(img_quotes)
        if not 1 <= int(match[2]) <= size:
            raise _Malformed(f"gold quote {label} is outside the context ({size} {match[1]} quotes)")
    types = raw.get("evidence_modality_type") or []
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise _Malformed("field 'evidence_modality_type' must be a list of strings")
    short = raw.get("answer_short")
    if isinstance(short, list):  # a few lines give a list of parts
        short = "; ".join(str(part) for part in short)
    elif isinstance(short, int | float) and not isinstance(short, bool):
        short = str(short)
    question = _need(raw, "question", str)
    if not question.strip():
        raise _Malformed("empty question")
    return MMDocRAGItem(
        q_id=_need(raw, "q_id", (int, str)),
        doc_name=_need(raw, "doc_name", str),
        domain=_optional_str(raw, "domain"),
        question=question,
        question_type=_optional_str(raw, "question_type"),
        evidence_modality_type=tuple(types),
        text_quotes=text_quotes,
        img_quotes=img_quotes,
        gold_quotes=tuple(dict.fromkeys(gold)),
        answer_short=short if isinstance(short, str) else "",
        answer_interleaved=_optional_str(raw, "answer_interleaved"),
        source=source,
        extra={k: v for k, v in raw.items() if k not in _KNOWN},
    )


def read_mmdocrag(
    path: str | Path, images_root: str | Path | None = None, *, require_images: bool = False
) -> MMDocRAGFile:
    """Every well-formed line as an item; each malformed line (bad JSON, a missing or mistyped field, a
    gold label outside the context; with `require_images`, a crop missing under `images_root`) as a
    reject naming the file and line. `images_root` defaults to the file's folder."""
    path = Path(path)
    root = Path(images_root) if images_root is not None else path.parent
    items: list[MMDocRAGItem] = []
    rejects: list[LineReject] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = _parse_item(json.loads(line), f"{path}:{number}")
                missing = [q for q in item.img_quotes if require_images and resolve_image(root, q.img_path) is None]
                if missing:
                    raise _Malformed(f"{missing[0].label}: image {missing[0].img_path} not found under {root}")
            except json.JSONDecodeError as exc:
                rejects.append(LineReject(str(path), number, f"invalid JSON: {exc.msg} at column {exc.colno}"))
            except _Malformed as exc:
                rejects.append(LineReject(str(path), number, str(exc)))
            else:
                items.append(item)
    return MMDocRAGFile(path, root, items, rejects)


def resolve_image(images_root: Path, img_path: str | None) -> Path | None:
    if not img_path:
        return None
    for candidate in (images_root / img_path, images_root / Path(img_path).name):
        if candidate.is_file():
            return candidate
    return None


def image_loader(images_root: str | Path) -> ImageLoader:
    """`load_image` for a generator: an item's img_path to PNG bytes (MMDocRAG ships JPEG crops)."""
    root = Path(images_root)

    def load(img_path: str) -> bytes:
        found = resolve_image(root, img_path)
        if found is None:
            raise FileNotFoundError(f"image {img_path} not found under {root}")
        data = found.read_bytes()
        if data.startswith(_PNG_SIGNATURE):
            return data
        return pymupdf.Pixmap(data).tobytes("png")

    return load


# -- writing -----------------------------------------------------------------------------------------


def item_from_request(
    request: AnswerRequest,
    *,
    layout_ids: Mapping[str, int],
    answer_interleaved: str,
    answer_short: str = "",
    gold_quote_ids: Iterable[str] = (),
    question_type: str = "",
    evidence_modality_type: Iterable[str] = (),
    domain: str = "",
    doc_name: str | None = None,
) -> MMDocRAGItem:
    """One of our questions with its context and answer, as an MMDocRAG line.

    Quotes are labelled by their `number` (`text{n}`, `image{n}`), so an answer that cites `[3]` and
    `image2` keeps its meaning. `layout_ids` gives each quote's layout index (quotes.layout_idx);
    gold ids are our quote ids and must be in the context. img_path stays relative to the warehouse root.
    """
    by_modality: dict[Modality, list[ContextQuote]] = {"text": [], "image": []}
    for q in request.quotes:
        by_modality[q.modality].append(q)
    quotes: dict[Modality, tuple[MMDocRAGQuote, ...]] = {}
    for modality, found in by_modality.items():
        ordered = sorted(found, key=lambda q: q.number)
        if [q.number for q in ordered] != list(range(1, len(ordered) + 1)):
            raise MMDocRAGError(f"question {request.question_id}: {modality} quotes are not numbered 1..{len(ordered)}")
        missing = [q.quote_id for q in ordered if q.quote_id not in layout_ids]
        if missing:
            raise MMDocRAGError(f"question {request.question_id}: no layout index for quote {missing[0]}")
        quotes[modality] = tuple(
            MMDocRAGQuote(
                modality,
                q.number,
                f"{modality}{q.number}",
                "text" if modality == "text" else "image",
                q.page_idx,
                layout_ids[q.quote_id],
                text=q.text if modality == "text" else "",
                img_path=q.img_path if modality == "image" else None,
                img_description=q.text if modality == "image" else "",
            )
            for q in ordered
        )
    label_of = {q.quote_id: f"{q.modality}{q.number}" for q in request.quotes}
    gold = []
    for quote_id in gold_quote_ids:
        if quote_id not in label_of:
            raise MMDocRAGError(f"question {request.question_id}: gold quote {quote_id} is not in the context")
        gold.append(label_of[quote_id])
    docs = Counter(q.doc_name for q in request.quotes)
    return MMDocRAGItem(
        q_id=request.question_id,
        doc_name=doc_name if doc_name is not None else (docs.most_common(1)[0][0] if docs else ""),
        domain=domain,
        question=request.question,
        question_type=question_type,
        evidence_modality_type=tuple(evidence_modality_type),
        text_quotes=quotes["text"],
        img_quotes=quotes["image"],
        gold_quotes=tuple(dict.fromkeys(gold)),
        answer_short=answer_short,
        answer_interleaved=answer_interleaved,
    )


def _write_lines(path: Path, records: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(path)
    return count


def write_mmdocrag(records: Iterable[MMDocRAGItem], path: str | Path, images_from: str | Path | None = None) -> int:
    """Write items as MMDocRAG lines; returns how many. With `images_from` (the root the items' img_path
    is relative to, e.g. the warehouse), each crop is copied beside the file under the same relative path,
    so the file and its images folder travel together."""
    path = Path(path)
    items = list(records)
    if images_from is not None:
        source = Path(images_from)
        for item in items:
            for q in item.img_quotes:
                found = resolve_image(source, q.img_path)
                if found is None or q.img_path is None:
                    raise MMDocRAGError(f"question {item.question_id}: image {q.img_path} not found under {source}")
                target = path.parent / q.img_path
                if target.resolve() != found.resolve():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(found, target)
    return _write_lines(path, (item.to_json() for item in items))


def finetune_record(item: MMDocRAGItem, system: str, render_user: Callable[[AnswerRequest], str]) -> dict[str, Any]:
    """<system, user, assistant> in OpenAI message format, as MMDocRAG's train.jsonl (Appendix C.2): the
    user message is the pure-text prompt of the item's context and question, the reply its gold answer."""
    return {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": render_user(item.request("text"))},
            {"role": "assistant", "content": item.answer_interleaved},
        ]
    }


def write_finetune(
    records: Iterable[MMDocRAGItem], path: str | Path, render_user: Callable[[AnswerRequest], str], system: str
) -> int:
    """Write fine-tuning records (`finetune_record`), one a line; items without a gold answer are refused."""
    items = list(records)
    unanswered = [item.question_id for item in items if not item.answer_interleaved.strip()]
    if unanswered:
        raise MMDocRAGError(f"no answer_interleaved to train on for question(s) {', '.join(unanswered[:5])}")
    return _write_lines(Path(path), (finetune_record(item, system, render_user) for item in items))
