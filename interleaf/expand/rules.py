"""The offline default expander: no model, only the question's own structure.

MMDocRAG §4.8 shows that multi-clause queries lift recall (+7.9 points for BGE) because a compound
question asks for several pieces of evidence, each best found by its own clause. Without an LLM we
split where the grammar does: several questions, "X and what/how/which ...", comparisons
("between A and B", "A vs B"), enumerations ("A, B and C"). Entities, numbers and "Table/Figure N"
references are kept in every clause (they are what evidence text shares with a question) and also
form a clause of their own. A question's format instructions ("Answer in million.") are left out
(interleaf/expand/instructions.py).
"""

from __future__ import annotations

import re

from interleaf.expand.config import ExpandConfig
from interleaf.expand.instructions import without_instructions
from interleaf.expand.protocol import Clause
from interleaf.text.references import REFERENCE, is_reference

_NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:[.,][0-9]+)*%?")
_QUOTED = re.compile(r"[\"“']([^\"”']{3,80})[\"”']")
_ENTITY = re.compile(
    r"\b(?:[A-Z][\w-]*[A-Z0-9](?:[\w-]|\.(?=\w))*|[A-Z][a-z]+(?:[\s-][A-Z][\w]+)+)\b"
)  # acronyms, Proper Names
_WH = r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|can|could|should|name|list|give)"
_SPLIT_AND = re.compile(rf"(?:,\s*|\s+)(?:and|but|while|whereas)\s+(?={_WH}\b)", re.I)
_SPLIT_SENT = re.compile(r"(?<=[?;])\s+|(?<=\.)\s+(?=[A-Z])")
# "between A and B": the two sides of a comparison (the composer reads them too: table_cells.py)
BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?:[,?.;]|\s+(?:in|on|for|when|according)\b|$)", re.I)
_VERSUS = re.compile(r"(.+?)\s+(?:vs\.?|versus|compared (?:to|with))\s+(.+)", re.I)
_ENUM = re.compile(
    r"((?:[\w%.-]+(?:\s+[\w%.-]+){0,3},\s+){1,}[\w%.-]+(?:\s+[\w%.-]+){0,3},?\s+(?:and|or)\s+[\w%.-]+(?:\s+[\w%.-]+){0,3})"
)
_LEADING_STOP = re.compile(r"^(?:In|On|At|The|A|An|According|For|From|Of|To|By|With|And)\s+")
_REFERENCE_WORDS = frozenset({"table", "figure", "fig", "section", "chapter", "appendix", "page", ""})
_STOP_HEAD = re.compile(rf"^\s*(?:{_WH})\b", re.I)


def anchors(question: str) -> list[str]:
    """Entities, quoted phrases, numbers and references: kept verbatim, in order, without repeats."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []  # spans already kept: "Table 5" is not also the number 5
    for pattern in (REFERENCE, _QUOTED, _ENTITY, _NUMBER):
        for m in pattern.finditer(question):
            text = (m.group(1) if pattern is _QUOTED else m.group(0)).strip()
            text = _LEADING_STOP.sub("", text) if pattern is _ENTITY else text
            if any(a <= m.start() < b for a, b in taken) or text.casefold() in _REFERENCE_WORDS:
                continue
            taken.append((m.start(), m.end()))
            if text and not _STOP_HEAD.match(text) and text.lower() not in ("i", "a", "the"):
                found.append((m.start(), text))
    seen: set[str] = set()
    out = []
    for _, text in sorted(found):
        key = text.casefold()
        if key not in seen and not any(key in s for s in seen):
            seen.add(key)
            out.append(text)
    return out


def _parts(question: str) -> tuple[list[str], list[str]]:
    parts = [p.strip() for p in _SPLIT_SENT.split(question) if p.strip()]
    out: list[str] = []
    for p in parts:
        out.extend(s.strip(" ,") for s in _SPLIT_AND.split(p) if s.strip(" ,"))
    extra: list[str] = []
    for p in out:
        m = BETWEEN.search(p)
        if m:
            head = p[: m.start()].strip()
            extra += [f"{head} {m.group(1)}".strip(), f"{head} {m.group(2)}".strip()]
        m = _VERSUS.search(p)
        if m and not BETWEEN.search(p):
            extra += [m.group(1).strip(), m.group(2).strip()]
        m = _ENUM.search(p)
        if m:
            head, tail = p[: m.start()].strip(), p[m.end() :].strip()
            for item in re.split(r",\s*(?:and|or)?\s*|\s+(?:and|or)\s+", m.group(1)):
                if item.strip():
                    extra.append(f"{head} {item.strip()} {tail}".strip())
    return out, extra  # grammatical parts; the sides of comparisons and enumerations


class RulesExpander:
    name = "rules"

    def __init__(self, config: ExpandConfig) -> None:
        self.config = config

    def expand(self, question: str) -> list[Clause]:
        w = self.config.weights
        # "Please write the answer in int format.": how to write the answer, in no evidence's words
        question = without_instructions(question)
        clauses = [Clause(question.strip(), "question", w.question)]
        keep = anchors(question)
        parts, sides = _parts(question)
        if len(parts) > 1:
            for part in parts:
                # a part that lost the question's subject gets its anchors back
                missing = [a for a in keep if a.casefold() not in part.casefold()]
                text = f"{part} {' '.join(missing)}".strip() if missing and len(part.split()) < 12 else part
                clauses.append(Clause(text, "part", w.part))
        # one side of a comparison must not get the other side back
        clauses += [Clause(side, "part", w.part) for side in sides]
        refs = [a for a in keep if is_reference(a)]
        if refs:
            clauses.append(Clause(" ".join(refs), "reference", w.reference))
        if self.config.keywords and len(keep) > 1:
            clauses.append(Clause(" ".join(keep), "keywords", w.keywords))
        return dedupe(clauses)[: self.config.max_clauses]


def dedupe(clauses: list[Clause]) -> list[Clause]:
    seen: set[str] = set()
    out = []
    for c in clauses:
        key = " ".join(c.text.casefold().split())
        if key and key not in seen:
            seen.add(key)
            out.append(c)
    return out
