"""What a question is asked about: the documents a user names, resolved against the warehouse.

One set of rules for every way in (`ask --doc`, a question file's `doc`, the server's `documents`):
a name matches a stored document by its file name, with or without `.pdf`, in any case, or by a
prefix of its `doc_id` (at least 6 hex digits, so a short word cannot match by accident). A name
that matches nothing is an error naming the input and the closest names; a name that matches a
file the ingest rejected says so and why. A question that is empty or blank is refused before
anything is retrieved.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath

from interleaf.errors import InterleafError
from interleaf.questions.stage import QuestionSet
from warehouse import Warehouse
from warehouse.catalog import query as query_views
from warehouse.catalog import query_stored

SCOPES = ("doc", "corpus")
_DOC_ID_PREFIX = re.compile(r"[0-9a-f]{6,64}")
CLOSEST = 3  # names suggested for a name that matches nothing
# a file the ingest stages turned away (question-set rejects also carry a path: their question file)
INGEST_REJECTS = "(stage IN ('parse', 'describe') OR stage LIKE 'index%') AND path IS NOT NULL ORDER BY created_at"


class ScopeError(InterleafError):
    """The scope a question is asked in cannot be what the user said."""


class EmptyQuestion(ScopeError):
    def __init__(self) -> None:
        super().__init__("the question is empty: ask something")


class UnknownDocument(ScopeError):
    def __init__(self, name: str, closest: Sequence[str]) -> None:
        hint = f"; closest: {', '.join(closest)}" if closest else "; no document is ingested"
        super().__init__(f"no ingested document matches {name!r}{hint}")
        self.name = name
        self.closest = tuple(closest)


class RejectedDocument(ScopeError):
    def __init__(self, name: str, file: str, reason: str) -> None:
        super().__init__(f"{name!r} is {file}, which the ingest rejected: {reason}")
        self.name = name
        self.file = file
        self.reason = reason


class NoDocumentNamed(ScopeError):
    pass


@dataclass(frozen=True)
class DocumentRef:
    doc_id: str
    name: str  # documents.name: the file name as ingested


def _key(name: str) -> str:
    """Names compare without case, surrounding blanks or a `.pdf` suffix."""
    folded = name.strip().casefold()
    return folded.removesuffix(".pdf")


@dataclass(frozen=True)
class DocumentCatalog:
    """The documents the published views hold, and the files the ingest rejected (with why)."""

    documents: tuple[DocumentRef, ...]
    rejected: dict[str, tuple[str, str]]  # name key -> (file name, reason)

    @classmethod
    def of(cls, wh: Warehouse) -> DocumentCatalog:
        documents: tuple[DocumentRef, ...] = ()
        if wh.published_fingerprint("parse"):
            _, rows = query_views(wh, "SELECT doc_id, name FROM documents ORDER BY name, doc_id", ("documents",))
            documents = tuple(DocumentRef(doc_id, name) for doc_id, name in rows)
        held = {_key(d.name) for d in documents}
        rejected: dict[str, tuple[str, str]] = {}
        _, rows = query_stored(wh, "rejects", INGEST_REJECTS)
        for row in rows:
            record = dict(zip(_, row, strict=True))
            file = PurePath(record["path"]).name
            if _key(file) not in held:  # a later ingest of the same name succeeded: not rejected now
                rejected[_key(file)] = (file, record["reason"])
        return cls(documents, rejected)

    def resolve(self, name: str) -> DocumentRef:
        key = _key(name)
        if not key:
            raise UnknownDocument(name, [])
        by_name = [d for d in self.documents if _key(d.name) == key]
        if by_name:
            return by_name[-1]
        if _DOC_ID_PREFIX.fullmatch(key):
            by_id = [d for d in self.documents if d.doc_id.startswith(key)]
            if len(by_id) == 1:
                return by_id[0]
            if len(by_id) > 1:
                raise ScopeError(f"{name!r} is a prefix of {len(by_id)} documents' ids: give more of it")
        if key in self.rejected:
            file, reason = self.rejected[key]
            raise RejectedDocument(name, file, reason)
        raise UnknownDocument(name, self.closest(key))

    def closest(self, key: str) -> list[str]:
        """The stored names nearest to what was typed: containing it first, then by similarity."""
        by_key = {_key(d.name): d.name for d in self.documents}

        def nearness(candidate: str) -> tuple[bool, float]:
            return key in candidate, difflib.SequenceMatcher(None, key, candidate).ratio()

        return [by_key[k] for k in sorted(by_key, key=nearness, reverse=True)[:CLOSEST]]

    def resolve_all(self, names: Iterable[str]) -> tuple[DocumentRef, ...]:
        """Every name resolved (duplicates once, in the order given)."""
        refs = [self.resolve(n) for n in names]
        return tuple(dict.fromkeys(refs))


def check_question(text: str | None) -> str:
    """The question as asked, stripped; an empty or blank one is refused."""
    if text is None or not text.strip():
        raise EmptyQuestion()
    return text.strip()


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise ScopeError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    return scope


def scoped_question_set(qset: QuestionSet, catalog: DocumentCatalog, scopes: Sequence[str]) -> QuestionSet:
    """Each question's documents resolved to `doc_ids`, its `doc_name` made canonical.

    A line whose document matches nothing or was rejected becomes a reject with the reason, and the
    rest go on. A line of a question file naming no document (`doc: null`) is asked over the whole
    corpus in either scope: its scope is every document; a single question (`ask`, the server) in
    doc scope must name one. When no question is left, that is an error: for a single question,
    its own.
    """
    for scope in scopes:
        check_scope(scope)
    rows, rejects = [], list(qset.rejects)
    last: ScopeError | None = None
    for row in qset.rows:
        where = "" if qset.source == "ask" else f"{PurePath(qset.source).name} question {row['question_id']}: "
        names = row.get("doc_names") or ([row["doc_name"]] if row.get("doc_name") else [])
        try:
            check_question(row["question"])
            refs = catalog.resolve_all(names)
            if "doc" in scopes and not refs and qset.source == "ask":
                raise NoDocumentNamed("doc scope needs a document (--doc NAME), and this question names none")
        except ScopeError as error:
            rejects.append((row["question_id"], f"{where}{error}"))
            last = error
            continue
        resolved = {k: v for k, v in row.items() if k != "doc_names"}
        resolved["doc_name"] = refs[0].name if len(refs) == 1 else None
        resolved["doc_ids"] = [r.doc_id for r in refs] if refs else None
        rows.append(resolved)
    if not rows:
        if last is not None and len(qset.rows) == 1:
            raise last
        reasons = "; ".join(reason for _, reason in rejects[-3:])
        raise ScopeError(f"no question of {qset.source} can be asked: {reasons}")
    return replace(qset, rows=rows, rejects=rejects, qset_id=_rehash(qset.qset_id, rows))


def _rehash(qset_id: str, rows: list[dict]) -> str:
    """The set's id covers what it was resolved to: a re-ingested (changed) document is a new set."""
    resolved = json.dumps([qset_id, [r.get("doc_ids") for r in rows]])
    return hashlib.sha256(resolved.encode()).hexdigest()[:16]
