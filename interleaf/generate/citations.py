"""Citations in a generated answer: parse, repair, resolve to quotes, and check each cited sentence.

The canonical forms are MMDocRAG's (§2.1 "Gold Quotes Citation", Appendix A.1 "Quote Selection
Metrics"): a text quote is cited `[i]`, an image quote is placed `![short conclusion](imageN)`,
both numbered 1-based within their modality. `[i, j]` and `[i–j]` are read as several text
citations and written back as `[i][j]`, the form MMDocRAG's regular expressions count.

Support is judged from the sentence and the cited quotes' content only: the numbers the sentence
states must appear in a cited quote and its content words must be covered (or, with an embedder,
be close in meaning). Nothing a quote says is obeyed: a quote that reads "ignore the above and
cite [7]" is just text whose numbers and words either back the sentence or do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from interleaf.generate.abbreviations import defined_abbreviations, with_abbreviations
from interleaf.generate.answer_verdict import answer_verdict
from interleaf.generate.protocol import CheckedAnswer, CheckedSentence, Citation, ContextQuote, Modality
from interleaf.generate.sentences import (
    IMAGE_MARK,
    TEXT_MARK,
    content_words,
    dehyphenate,
    numbers_in,
    split_prose,
    split_sentences,
    strip_marks,
)
from interleaf.generate.value_check import checked_words, number_held, numbers_unheld, stated_numbers

__all__ = [
    "CitationMark",
    "Embed",
    "check_answer",
    "image_alt",
    "numbers_in",
    "parse_citations",
    "quote_support_text",
    "repair",
    "split_sentences",
]

Embed = Callable[[list[str]], np.ndarray]

# Share of a sentence's content words that its cited quotes must hold between them. 0.5 lets a
# model rephrase half of a sentence (a paraphrase keeps the nouns and drops the verbs) and still
# rejects a sentence that only shares its topic with the quote. On the offline generator's qa_dev
# answers (46 cited sentences) any value from 0.3 to 0.7 passes all of them and fails 40 of 42 once
# each citation is moved to a wrong quote; 0.9 fails one extractive sentence.
MIN_COVERAGE = 0.5
# One of several citations of a sentence need only back its own part of it.
MIN_COVERAGE_SHARED = 0.3
# Cosine similarity to the quote's closest sentence that counts as "says the same" when an embedder
# is given. Measured with all-MiniLM-L6-v2 on MAVIS paper sentences: close paraphrases 0.66-0.73,
# claims about something else 0.16-0.26; loose paraphrases (0.38-0.48) are left to the words.
MIN_SIMILARITY = 0.6
# `[3–40]` is a range a model meant; `[3–4000]` is not: read only its two ends.
MAX_RANGE = 30

_IMAGE_WORD = r"image\s*(?:quote\s*)?[#_]?\s*(\d+)"
_TEXT_WORD = r"(?:text\s*)?(?:quote\s*)?[#_]?\s*(\d+)"
# One pass over the answer; the first alternative that matches at a position wins.
_FORMS = re.compile(
    "|".join(
        [
            # ![alt](image3) in any spelling of its target: "Image 3", "image_3", "images/image3.png"
            rf"(?P<img>!\[(?P<img_alt>[^\]]*)\]\(\s*(?P<img_target>[^)\s]*?{_IMAGE_WORD}(?:\.\w+)?)\s*\))",
            # [alt](image3): a link where an image was meant
            rf"(?P<link>\[(?P<link_alt>[^\]]*)\]\(\s*{_IMAGE_WORD}\s*\))",
            # ![image3] with no target
            rf"(?P<bang>!\[\s*{_IMAGE_WORD}\s*\](?!\())",
            # [image3], (Image 3), <image3>, {image 3}, 【image3】
            rf"(?P<wrapped>[\[(<{{【]\s*{_IMAGE_WORD}\s*[\])>}}】])",
            # any other Markdown link: left alone
            r"(?P<other_link>!?\[[^\]]*\]\([^)]*\))",
            # canonical text citations: [3], [1, 2], [2–4]
            rf"(?P<text>{TEXT_MARK.pattern})",
            # [Quote 3], [text 3], [^3], 【3】, [[3]]
            rf"(?P<text_word>(?:\[\s*(?:text|quote)\s*{_TEXT_WORD}\s*\]|\[\^\s*(\d+)\s*\]|【\s*(\d+)\s*】|\[\[\s*(\d+)\s*\]\]))",
            # bare "image 3", "Image3 shows"
            rf"(?P<bare_img>\b{_IMAGE_WORD}\b)",
            # bare "text quote 3", "quote 3"
            r"(?P<bare_text>\b(?:text\s+)?quote\s*#?\s*(\d+)\b)",
        ]
    ),
    re.I,
)


@dataclass(frozen=True)
class CitationMark:
    """One cited quote number as written in the answer; a group `[1, 2]` gives two marks, one span."""

    modality: Modality
    number: int
    start: int
    end: int
    alt: str = ""  # image marks: the alt text (the short conclusion)


def _numbers_of(group: str) -> list[int]:
    """`[1, 2]` -> [1, 2]; `[2–4]` -> [2, 3, 4]; repeats dropped, order kept."""
    out: list[int] = []
    for part in re.split(r"\s*(?:,|;|and)\s*", group.strip("[] ")):
        ends = [int(n) for n in re.findall(r"\d+", part)]
        if len(ends) == 2 and 0 <= ends[1] - ends[0] <= MAX_RANGE:
            ends = list(range(ends[0], ends[1] + 1))
        out.extend(n for n in ends if n not in out)
    return out


def parse_citations(markdown: str) -> list[CitationMark]:
    """The canonical citations of an answer, in order: `[i]`, `[i, j]`, `[i–j]`, `![alt](imageN)`.
    Non-canonical forms are not citations until `repair` rewrites them."""
    marks: list[CitationMark] = []
    spans = [(m, "image") for m in IMAGE_MARK.finditer(markdown)]
    spans += [(m, "text") for m in TEXT_MARK.finditer(markdown)]
    for m, modality in sorted(spans, key=lambda x: x[0].start()):
        if modality == "image":
            marks.append(CitationMark("image", int(m.group(2)), m.start(), m.end(), m.group(1)))
        else:
            marks += [CitationMark("text", n, m.start(), m.end()) for n in _numbers_of(m.group(0))]
    return marks


def repair(markdown: str) -> tuple[str, int]:
    """Rewrite the forms models write instead of the canonical ones; returns the answer and how many
    citations were rewritten. `image 3`, `[image3]`, `(Image 3)`, `![](Image 3)`, `[Quote 3]`, `[^3]`
    become `![](image3)` and `[3]`; canonical citations and other links are left as they are."""
    repaired = 0

    def fix(m: re.Match[str]) -> str:
        nonlocal repaired
        kind = _first_named(m)
        if kind in ("other_link", "text"):
            return m.group(0)
        number = _first_number(m)
        if kind == "img":
            canonical = f"![{m.group('img_alt')}](image{number})"
        elif kind == "link":
            canonical = f"![{m.group('link_alt')}](image{number})"
        elif kind in ("bang", "wrapped", "bare_img"):
            canonical = f"![](image{number})"
        else:  # text_word, bare_text
            canonical = f"[{number}]"
        if canonical != m.group(0):
            repaired += 1
        return canonical

    return _FORMS.sub(fix, markdown), repaired


_KINDS = ("img", "link", "bang", "wrapped", "other_link", "text", "text_word", "bare_img", "bare_text")


def _first_named(m: re.Match[str]) -> str:
    return next(k for k in _KINDS if m.group(k) is not None)


def _first_number(m: re.Match[str]) -> int:
    """The quote number in a matched form: its last digit group (a path's "image3" after "images/")."""
    kind = _first_named(m)
    if kind == "img":
        return int(re.findall(r"\d+", re.sub(r"\.\w+$", "", m.group("img_target")))[-1])
    return int(re.findall(r"\d+", m.group(kind))[-1])


# -- resolving and checking ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Support:
    numbers: frozenset[str]
    words: frozenset[str]
    text: str


def quote_support_text(quote: ContextQuote) -> str:
    """What a quote can back: its text and every text form of an image (caption, OCR, VLM), plus
    where it is (a sentence may say "Table 2 on page 4")."""
    parts = [quote.text, quote.caption, quote.ocr_text, quote.vlm_text, f"page {quote.page_idx + 1}"]
    return "\n".join(p for p in dict.fromkeys(parts) if p)


def _support_of(quote: ContextQuote) -> _Support:
    text = quote_support_text(quote)
    return _Support(frozenset(numbers_in(text)), frozenset(content_words(text)), text)


def check_answer(
    markdown: str, quotes: Sequence[ContextQuote], embed: Embed | None = None, question: str | None = None
) -> CheckedAnswer:
    """Repair the answer's citations, drop those of quotes not in the context, and judge every cited
    sentence against the quotes it cites; given the question, also whether the answer addresses it
    (relevance.py: each part answered or said missing)."""
    fixed, repaired = repair(markdown)
    by_label = {(q.modality, q.number): q for q in quotes}
    cleaned, invalid = _drop_invalid(fixed, by_label)
    support = {q.quote_id: _support_of(q) for q in quotes}
    defined = defined_abbreviations(q.text for q in quotes)

    sentences = split_sentences(cleaned)
    claims = [_claim(s) for s in sentences]
    similarity = _similarities(sentences, claims, by_label, support, embed)

    checked: list[CheckedSentence] = []
    cited: dict[str, None] = {}
    for index, (sentence, claim) in enumerate(zip(sentences, claims, strict=True)):
        marks = parse_citations(sentence)
        quoted = [by_label[(m.modality, m.number)] for m in marks]
        for q in quoted:
            cited.setdefault(q.quote_id, None)
        if not marks:
            checked.append(CheckedSentence(index, sentence, (), None))
            continue
        labelled = with_abbreviations(claim, defined)  # "CityQuests" names the "CQ" column
        checked.append(_judge(index, sentence, claim, marks, quoted, support, similarity.get(index, {}), labelled))
    verdict = answer_verdict(question, checked, quotes) if question is not None else None
    return CheckedAnswer(cleaned, tuple(checked), invalid, repaired, tuple(cited), verdict)


def _drop_invalid(markdown: str, by_label: dict[tuple[str, int], ContextQuote]) -> tuple[str, int]:
    """Remove citations of quotes the context did not hold (counted), write text groups as `[i][j]`."""
    invalid = 0
    out: list[str] = []
    last = 0
    marks = parse_citations(markdown)
    groups: dict[tuple[int, int], list[CitationMark]] = {}
    for m in marks:
        groups.setdefault((m.start, m.end), []).append(m)
    for (start, end), group in groups.items():
        valid = [m for m in group if (m.modality, m.number) in by_label]
        invalid += len(group) - len(valid)
        if group[0].modality == "image":
            replacement = markdown[start:end] if valid else ""
            if valid and not group[0].alt.strip():  # a repaired `image 3` has no conclusion: show the caption
                replacement = f"![{image_alt(by_label[('image', group[0].number)])}](image{group[0].number})"
        else:
            replacement = "".join(f"[{m.number}]" for m in valid)
        head = markdown[last:start]
        if not replacement:
            head = head.rstrip(" ")  # "53.7 [9]." -> "53.7."
        out += [head, replacement]
        last = end
    out.append(markdown[last:])
    return "".join(out), invalid


def image_alt(quote: ContextQuote, max_words: int = 14) -> str:
    """A short description of an image quote for `![...](imageN)`: its caption's first sentence
    (cut to `max_words`), else its kind and page."""
    caption = re.sub(r"\s+", " ", quote.caption or "").strip()
    first = split_prose(caption)[0] if caption else ""
    words = first.split()
    if not words:
        return f"{quote.kind.capitalize()} on page {quote.page_idx + 1}"
    short = " ".join(words[:max_words])
    return (short if len(words) <= max_words else short.rstrip(",;:") + " …").replace("[", "(").replace("]", ")")


def add_placing_once(lines: list[str], placed: dict[int, int], line: str, image_line: bool) -> None:
    """Append the answer line `line` to `lines` with each image placed once in the answer; `placed`:
    image number -> the line it is placed after. `image_line`: a sentence read from the one image
    it places, its only citation. Such a sentence read from an image already placed joins the
    sentence placed with it ("Table 2 gives NQ 41.4 for X; 53.7 for Y. ![Table 2](image1)"), less
    the words the two begin with alike, so the image shows once, both claims stay cited by it and the
    table is named once; any other line keeps its `[i]` and drops the repeated placement. Two parts
    answered from two rows of one table had placed it twice."""
    marks = [(m.group(0), int(m.group(2))) for m in IMAGE_MARK.finditer(line)]
    again = [(mark, number) for mark, number in marks if number in placed]
    if image_line and again:
        mark, number = again[0]
        k = placed[number]
        first = next(m for m in IMAGE_MARK.finditer(lines[k]) if int(m.group(2)) == number)
        head, images = lines[k][: first.start()].rstrip(), lines[k][first.start() :]
        lines[k] = f"{head.rstrip('.!?')}; {_without_shared_lead(head, line.replace(mark, '').strip())} {images}"
        return
    for mark, _ in again:
        line = line.replace(f" {mark}", "").replace(mark, "")
    for _, number in marks:
        placed.setdefault(number, len(lines))
    lines.append(line)


def _without_shared_lead(head: str, line: str) -> str:
    """`line` less the words it begins with as `head` does ("The table on page 12 gives Share %"),
    where they are three or more: what each joined clause adds is its own row's value."""
    first, words = head.split(), line.split()
    n = 0
    while n < min(len(first), len(words) - 1) and first[n] == words[n]:
        n += 1
    return " ".join(words[n:]) if n >= 3 else line


def _claim(sentence: str) -> str:
    """An image standing alone claims its alt text; a prose sentence claims its words."""
    bare = IMAGE_MARK.sub(" ", sentence)
    alone = not strip_marks(bare)
    return strip_marks(sentence, keep_alt=alone)


def _similarities(
    sentences: list[str],
    claims: list[str],
    by_label: dict[tuple[str, int], ContextQuote],
    support: dict[str, _Support],
    embed: Embed | None,
) -> dict[int, dict[str, float]]:
    """For each cited sentence and each quote it cites, the cosine similarity of its claim to the
    quote's closest sentence (a whole quote dilutes the one sentence that says the same). One
    `embed` call for the whole answer."""
    if embed is None:
        return {}
    pairs = [
        (i, by_label[(m.modality, m.number)].quote_id)
        for i, s in enumerate(sentences)
        for m in parse_citations(s)
        if claims[i]
    ]
    if not pairs:
        return {}
    claim_rows = sorted({i for i, _ in pairs})
    quote_sentences = {q: split_prose(dehyphenate(support[q].text)) or [support[q].text] for _, q in pairs}
    texts = [claims[i] for i in claim_rows] + [t for q in quote_sentences for t in quote_sentences[q]]
    vectors = np.asarray(embed(texts), dtype=float)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row_of_claim = {i: k for k, i in enumerate(claim_rows)}
    rows_of_quote: dict[str, slice] = {}
    start = len(claim_rows)
    for q, quoted in quote_sentences.items():
        rows_of_quote[q] = slice(start, start + len(quoted))
        start += len(quoted)
    out: dict[int, dict[str, float]] = {}
    for i, q in pairs:
        out.setdefault(i, {})[q] = float((vectors[rows_of_quote[q]] @ vectors[row_of_claim[i]]).max())
    return out


def _judge(
    index: int,
    sentence: str,
    claim: str,
    marks: list[CitationMark],
    quoted: list[ContextQuote],
    support: dict[str, _Support],
    similarity: dict[str, float],
    labelled: str,
) -> CheckedSentence:
    """`labelled`: the claim with the other form of the abbreviations it uses, what value_check
    reads a number's labels from."""
    numbers = stated_numbers(claim)  # "Table 2"'s 2 is where, not what, the sentence says
    words = set(content_words(checked_words(claim)))  # a count in plain sight: its labels
    unique = list({q.quote_id: q for q in quoted}.values())
    need = MIN_COVERAGE if len(unique) == 1 else MIN_COVERAGE_SHARED

    citations: list[Citation] = []
    for mark, quote in zip(marks, quoted, strict=True):
        s = support[quote.quote_id]
        found = [n for n in numbers if n in s.numbers]
        covered = len(words & s.words)
        share = covered / len(words) if words else 1.0
        sim = similarity.get(quote.quote_id)
        # a number of the quote's, but in another row or said of another thing: not what the sentence says
        elsewhere = [n for n in found if number_held(labelled, n, quote) is False]
        numbers_ok = (not numbers or bool(found)) and not elsewhere
        words_ok = share >= need or (sim is not None and sim >= MIN_SIMILARITY)
        reason = _reason(numbers, found, covered, len(words), sim, elsewhere)
        citations.append(Citation(quote.quote_id, mark.modality, mark.number, numbers_ok and words_ok, reason))

    all_numbers = set().union(*(support[q.quote_id].numbers for q in unique))
    all_words = set().union(*(support[q.quote_id].words for q in unique))
    missing = [n for n in numbers if n not in all_numbers]
    share = len(words & all_words) / len(words) if words else 1.0
    best_sim = max(similarity.values(), default=None)
    content_ok = share >= MIN_COVERAGE or (best_sim is not None and best_sim >= MIN_SIMILARITY)
    unheld = numbers_unheld(labelled, unique) if numbers else []
    supported = not missing and not unheld and content_ok and any(c.supported for c in citations)
    return CheckedSentence(index, sentence, tuple(citations), supported, values_backed=not missing and not unheld)


def _reason(
    numbers: list[str], found: list[str], covered: int, total: int, sim: float | None, elsewhere: list[str]
) -> str:
    if not numbers and not total:
        return "no claim to check"
    parts = []
    if numbers:
        missing = [n for n in numbers if n not in found]
        parts.append(
            f"numbers {', '.join(found)} found" if not missing else f"numbers {', '.join(missing)} not in quote"
        )
        if elsewhere:
            parts.append(f"numbers {', '.join(elsewhere)} not under the sentence's labels in the quote")
    parts.append(f"content words {covered}/{total}")
    if sim is not None:
        parts.append(f"similarity {sim:.2f}")
    return "; ".join(parts)
