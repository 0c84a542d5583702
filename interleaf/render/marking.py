"""Find what each renderer must draw in an answer's Markdown: citations, image placements and the
sentences the checker found unsupported.

The answer is rewritten once with reserved marker characters (Unicode punctuation no document or
model writes, stripped from the input first): each citation or placement becomes a numbered token,
each unsupported sentence sits between a start and an end mark. A renderer then formats the text
(Markdown to HTML, to rich Text, ...) and swaps the markers for its own elements, so the document's
own characters are escaped by the formatter and never pass through as markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from interleaf.generate.protocol import CheckedSentence, Modality

# Punctuation (Ps/Pe), so CommonMark's emphasis rules treat a mark like the `.` or `)` beside it.
SENT_START, SENT_END = "\u2e20", "\u2e21"
TOKEN_OPEN, TOKEN_CLOSE = "\u2e22", "\u2e23"
RESERVED = re.compile("[\u2e20-\u2e23]")
TOKEN = re.compile(TOKEN_OPEN + r"(\d+)" + TOKEN_CLOSE)
REGION = re.compile(SENT_START + "(.*?)" + SENT_END, re.S)

# MMDocRAG's forms (Appendix E.3), as the checker repairs them: `![conclusion](image2)` and `[3]`;
# a list `[1, 2]` is read as `[1][2]`.
IMAGE_PLACEMENT = re.compile(r"!\[([^\]\n]*)\]\(\s*image\s*(\d+)\s*\)")
TEXT_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\](?!\()")
# block syntax a mark must stay out of: a heading, list item, quote or table row's opening; a row's closing
_BLOCK_LEAD = re.compile(r"(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+|>[ \t]?|\|[ \t]*)+")
_BLOCK_TAIL = re.compile(r"[ \t]*\|[ \t]*$")
_FENCE = re.compile(r"\s*(?:```|~~~)")


@dataclass(frozen=True)
class Placement:
    modality: Modality
    number: int
    alt: str = ""  # an image placement's text, `conclusion` in `![conclusion](image2)`


@dataclass(frozen=True)
class MarkedAnswer:
    text: str  # the answer with markers (see the module's docstring)
    placements: tuple[Placement, ...]  # token k is placements[k]
    flagged: tuple[CheckedSentence, ...]  # the k-th marked region is flagged[k]
    unplaced: tuple[CheckedSentence, ...]  # unsupported sentences not found in the text


def sentence_reason(sentence: CheckedSentence) -> str:
    """Why the checker did not accept the sentence, citation by citation."""
    parts = [
        f"{'[' + str(c.number) + ']' if c.modality == 'text' else 'image' + str(c.number)}: {c.reason}"
        for c in sentence.citations
    ]
    return "; ".join(parts) or "no supporting quote"


def _sentence_pattern(text: str) -> re.Pattern[str] | None:
    words = RESERVED.sub("", text).split()
    return re.compile(r"\s+".join(re.escape(w) for w in words)) if words else None


def _find_flagged(text: str, sentences: tuple[CheckedSentence, ...]) -> tuple[list, list[CheckedSentence]]:
    """(start, end, sentence) of each unsupported sentence found, in order; and those not found."""
    found: list[tuple[int, int, CheckedSentence]] = []
    unplaced: list[CheckedSentence] = []
    pos = 0
    for sentence in sorted(sentences, key=lambda s: s.index):
        pattern = _sentence_pattern(sentence.text)
        match = pattern.search(text, pos) if pattern else None
        if match is None:
            if sentence.supported is False:
                unplaced.append(sentence)
            continue
        start, end = match.span()
        pos = end
        if sentence.supported is not False:
            continue
        if _FENCE.match(sentence.text):  # a mark would break the fence
            unplaced.append(sentence)
            continue
        if start == 0 or text[text.rfind("\n", 0, start) + 1 : start].strip() == "":
            lead = _BLOCK_LEAD.match(text, start, end)
            if lead:
                start = lead.end()
        tail = _BLOCK_TAIL.search(text, start, end)
        if tail:
            end = tail.start()
        if start < end:
            found.append((start, end, sentence))
    return found, unplaced


def mark_answer(markdown: str, sentences: tuple[CheckedSentence, ...]) -> MarkedAnswer:
    text = RESERVED.sub("", markdown)
    replacements: list[tuple[int, int, list[Placement]]] = []
    for match in IMAGE_PLACEMENT.finditer(text):
        replacements.append((match.start(), match.end(), [Placement("image", int(match.group(2)), match.group(1))]))
    taken = [(s, e) for s, e, _ in replacements]
    for match in TEXT_CITATION.finditer(text):
        if any(s <= match.start() < e for s, e in taken):
            continue
        numbers = [int(n) for n in re.split(r"\s*,\s*", match.group(1))]
        replacements.append((match.start(), match.end(), [Placement("text", n) for n in numbers]))
    replacements.sort(key=lambda r: r[0])

    found, unplaced = _find_flagged(text, sentences)
    inserts: list[tuple[int, int, str]] = []  # (position, order at that position, mark)
    for start, end, _ in found:
        for s, e, _ in replacements:  # a mark never splits a citation: move it to the citation's edge
            if s < start < e:
                start = s
            if s < end < e:
                end = e
        inserts.append((start, 1, SENT_START))
        inserts.append((end, 0, SENT_END))
    inserts.sort()

    out: list[str] = []
    placements: list[Placement] = []
    cursor = 0
    events = sorted([(s, 1, e, ps) for s, e, ps in replacements] + [(p, 0, o, m) for p, o, m in inserts])
    for position, is_replacement, extra, value in events:
        out.append(text[cursor:position])
        cursor = position
        if is_replacement:
            for placement in value:
                out.append(f"{TOKEN_OPEN}{len(placements)}{TOKEN_CLOSE}")
                placements.append(placement)
            cursor = extra
        else:
            out.append(value)
    out.append(text[cursor:])
    return MarkedAnswer("".join(out), tuple(placements), tuple(s for _, _, s in found), tuple(unplaced))
