"""Characters the text layer writes as control codes: what the glyph drawn there actually is.

A simple font whose ToUnicode map leaves a code out makes MuPDF fall back to the raw code, and a
code below 32 comes out as a control character that word extraction treats as a space: the page
shows "−0.4127", the words say "0.4127". Each such character is resolved, first path that answers:

1. **The font's encoding.** The glyph name the font's /Encoding /Differences (over the encoding
   built into a Type 1 font program) gives the code, through the Adobe Glyph List (`minus`,
   `uni2212`, `endash`, ...); in a Dingbats font, the code in the standard Zapf Dingbats encoding
   (✓ ✗ ★ ...). MuPDF writes some unknown names as the number in them ("a19" comes out as code 19),
   so a name whose number is the code is a candidate too.
2. **The glyph's name by position.** Fonts converted without glyph names name each glyph after its
   code in the original font ("C0", "C15"). In a TeX math-symbol font (cmsy and its copies: a
   name with `cmsy`, `MathSy` or `MthSy`) that code is a position in TeX's OMS encoding, a fixed
   table (Knuth, *The TeXbook*, appendix F; `omsenc.def`).
3. **OCR of the cell.** The word the character belongs to is rendered and read by the OCR engine,
   and the character is taken from what it reads at that place (only where an engine is given).
   A glyph touching no word is not read: nothing known around it checks the reading. On this
   corpus those are list bullets and math marks (27 of them in the IBM Redpaper and DPR): read at
   1.2-2.1 s each (the detector scales the small cell up to 736 px), none was ever placed; read
   without that upscaling, they came back as "1", "A", "一" and "▲" for a "►".

A character none of them resolves becomes U+FFFD, the Unicode replacement character, in the word
it is part of: a reader sees that something stood there rather than a number whose sign silently
vanished (interleaf.pdf.words.with_stand_ins; an unnamed glyph standing alone is left out).

`corrosion-plot-table.pdf` (Data in Brief, Elsevier) takes path 2: its Ecorr minus signs are code
3 of `AdvMacMthSyN`, whose /Differences name it `/C0`; the embedded glyph `C0` is a horizontal bar
(84,225)-(696,275), OMS position 0 is the minus sign, and so is `C15` (a disc) OMS 15, the bullet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from fontTools import agl

from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.ocr.protocol import OcrEngine, OcrError
from interleaf.pdf.render import render_bgr

Box = tuple[float, float, float, float]

# Tab, line feed and carriage return are real white space in a text layer; the other C0 codes are not text.
_STAND_INS = frozenset(chr(c) for c in range(32)) - {"\t", "\n", "\r"}
REPLACEMENT = "\ufffd"
# (dpi, margin around the cell in line heights), tried in turn until a reading places the glyph. On
# the corrosion table's six signs (6.6 pt digits) 300 dpi with half a line of margin reads all six;
# 400 dpi alone misses two; a wider margin brings in the neighbouring rows, which still read right.
OCR_ATTEMPTS = ((300, 0.5), (300, 1.0), (200, 1.0))
_DASHES = frozenset("-‐‒–—―−一")

_TEX_SYMBOL_FONT = re.compile(r"cmsy|mathsy|mthsy", re.IGNORECASE)
_POSITIONAL_NAME = re.compile(r"^[Cc](\d{1,3})$")
_NAME_NUMBER = re.compile(r"(?<=[A-Za-z])\d{1,3}$")
_DUP = re.compile(r"dup\s+(\d{1,3})\s*/([^\s/\[\]{}()]+)\s+put")
# Codes whose dingbat Unicode placed outside U+2700-U+277F (the holes of its Dingbats block).
_ZAPF_MOVED = {
    0x25: "\u260e",
    0x2A: "\u261b",
    0x2B: "\u261e",
    0x48: "\u2605",
    0x6C: "\u25cf",
    0x6E: "\u25a0",
    0x73: "\u25b2",
    0x74: "\u25bc",
    0x75: "\u25c6",
    0x77: "\u25d7",
}
# TeX's OMS encoding (cmsy10): position -> character. Positions 65-90 are calligraphic capitals.
OMS = (
    "−·×∗÷⋄±∓⊕⊖⊗⊘⊙◯∘•"  # 0-15
    "≍≡⊆⊇≤≥⪯⪰∼≈⊂⊃≪≫≺≻"  # 16-31
    "←→↑↓↔↗↘≃⇐⇒⇑⇓⇔↖↙∝"  # 32-47
    "′∞∈∋△▽\u0338↦∀∃¬∅ℜℑ⊤⊥"  # 48-63
    "ℵABCDEFGHIJKLMNOPQRSTUVWXYZ∪∩⊎∧∨"  # 64-95
    "⊢⊣⌊⌋⌈⌉{}⟨⟩|‖↕⇕\\≀"  # 96-111
    "√⨿∇∫⊔⊓⊑⊒§†‡¶♣♢♡♠"  # 112-127
)


@dataclass(frozen=True)
class StandIn:
    """One control character of the text layer and what it was resolved to."""

    box: Box
    code: int
    font: str
    block: int
    line: int
    char: str | None = None  # None: not resolved yet
    source: str | None = None  # encoding, tex-position, ocr or unresolved


def has_stand_ins(text: str) -> bool:
    return any(ch in _STAND_INS for ch in text)


def _base_name(font: str) -> str:
    """'IHEOLK+AdvMacMthSyN' -> 'AdvMacMthSyN' (the subset tag is not part of the name)."""
    return font.split("+", 1)[1] if len(font) > 7 and font[6] == "+" else font


def _differences(doc: pymupdf.Document, xref: int) -> dict[int, str]:
    kind, value = doc.xref_get_key(xref, "Encoding/Differences")
    if kind != "array":
        return {}
    names: dict[int, str] = {}
    code = 0
    for token in re.findall(r"/[^\s/\[\]]+|\d+", value):
        if token.startswith("/"):
            names[code] = token[1:]
            code += 1
        else:
            code = int(token)
    return names


def _builtin_encoding(doc: pymupdf.Document, xref: int, ext: str) -> dict[int, str]:
    """The encoding a Type 1 font program carries (`dup 51 /a19 put`), from its clear-text part."""
    if ext not in ("pfa", "pfb"):
        return {}
    program = doc.extract_font(xref)[3]
    clear = program[: program.find(b"eexec")].decode("latin-1") if b"eexec" in program else ""
    return {int(code): name for code, name in _DUP.findall(clear)}


def _font_encodings(page: pymupdf.Page) -> dict[str, list[dict[int, str]]]:
    """Base font name -> the encoding (code -> glyph name) of each font of the page with that name."""
    out: dict[str, list[dict[int, str]]] = {}
    for xref, ext, _type, basefont, *_rest in page.get_fonts(full=True):
        encoding = _builtin_encoding(page.parent, xref, ext) | _differences(page.parent, xref)
        out.setdefault(_base_name(basefont), []).append(encoding)
    return out


def _zapf_dingbats(code: int) -> str | None:
    """The standard Zapf Dingbats encoding, codes 33-126 (Unicode's ZapfDingbats mapping)."""
    if not 0x21 <= code <= 0x7E:
        return None
    return _ZAPF_MOVED.get(code, chr(0x2700 + code - 0x20))


def char_from_name(name: str, font: str, code: int | None = None) -> tuple[str, str] | None:
    """(character, path) for a glyph name (at `code`) in a font, or None when neither says."""
    mapped = agl.toUnicode(name)
    if mapped and not has_stand_ins(mapped):
        return mapped, "encoding"
    positional = _POSITIONAL_NAME.match(name)
    if positional and _TEX_SYMBOL_FONT.search(font) and int(positional.group(1)) < len(OMS):
        return OMS[int(positional.group(1))], "tex-position"
    dingbat = _zapf_dingbats(code) if code is not None and "dingbat" in font.lower() else None
    return (dingbat, "encoding") if dingbat else None


def _candidates(encodings: Sequence[dict[int, str]], code: int) -> list[tuple[int, str]]:
    """(code, glyph name) pairs a reported code may stand for: the code itself first, then names
    whose number is the code (MuPDF's reading of a name it does not know)."""
    direct = [(code, e[code]) for e in encodings if code in e]
    numbered = [(c, n) for e in encodings for c, n in e.items() if (m := _NAME_NUMBER.search(n)) and int(m[0]) == code]
    return direct + numbered


def stand_ins(page: pymupdf.Page, textpage: pymupdf.TextPage) -> list[StandIn]:
    """Every control character of the page's text, resolved from its font where the font says."""
    encodings: dict[str, list[dict[int, str]]] | None = None
    found = []
    for block in textpage.extractRAWDICT()["blocks"]:
        for line_no, line in enumerate(block.get("lines", ())):
            for span in line["spans"]:
                for ch in span["chars"]:
                    if ch["c"] not in _STAND_INS:
                        continue
                    encodings = _font_encodings(page) if encodings is None else encodings
                    code, font = ord(ch["c"]), span["font"]
                    named = _candidates(encodings.get(_base_name(font), []), code)
                    hit = next((r for r in (char_from_name(n, font, c) for c, n in named) if r), None)
                    box = tuple(float(v) for v in ch["bbox"])
                    found.append(StandIn(box, code, font, block["number"], line_no, *(hit or (None, None))))  # type: ignore[arg-type]
    return found


def read_by_ocr(page: pymupdf.Page, glyph: StandIn, cell: Box, cell_text: str, before: bool, ocr: OcrEngine) -> StandIn:
    """The character OCR reads where the glyph stands, next to the cell text it belongs to: the
    cell is rendered and read, and a line of the reading must hold the cell's own text right after
    (or before) one character, else the glyph stays unresolved. A dash read before a digit is a
    minus sign (OCR cannot tell -, – and − apart; in front of a number they mean the sign)."""
    x0, y0, x1, y1 = cell
    known = re.escape(cell_text.replace(" ", ""))
    pattern = re.compile(f"(\\S){known}" if before else f"{known}(\\S)")
    side = (y1 - y0) * 0.15  # little room left and right: the neighbouring word must not be read
    for dpi, margin in OCR_ATTEMPTS:
        pad = (y1 - y0) * margin
        try:
            lines = ocr.read(render_bgr(page, dpi, (x0 - side, y0 - pad, x1 + side, y1 + pad)))
        except OcrError:
            return glyph
        for line in lines:
            match = pattern.search(line.text.replace(" ", ""))
            if match:
                char = match.group(1)
                if before and char in _DASHES and cell_text[:1].isdigit():
                    char = "\u2212"
                return replace(glyph, char=char, source="ocr")
    return glyph


def draws_nothing(page: pymupdf.Page, glyph: StandIn) -> bool:
    """True when the glyph's box (its middle, clear of kerned neighbours) renders blank: a space or
    a tab the layout program wrote as a character, which word extraction already treats as one."""
    x0, y0, x1, y1 = glyph.box
    inset = (x1 - x0) * 0.2
    pixels = render_bgr(page, 300, (x0 + inset, y0, x1 - inset, y1))
    return pixels.size == 0 or int(pixels.min()) > 200
