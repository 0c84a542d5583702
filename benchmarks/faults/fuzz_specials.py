"""The named hostile PDFs of the fuzz fault, each written object by object so that it is exactly
what its name says: a decompression bomb, deep nesting, a page-tree loop, a 10,000-page file."""

from __future__ import annotations

import zlib

_TEXT = b"BT /F1 14 Tf 72 720 Td (A page of the fuzz fault.) Tj ET"
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def raw_pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A well-formed PDF of `objects` (object i+1 is objects[i]) with a correct xref table: every
    damage a special carries is the one it names, not a broken file around it."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _one_page(contents: bytes, resources: bytes = b"<< /Font << /F1 4 0 R >> >>") -> bytes:
    """Catalog, page tree and one page drawing object 5 (`contents`); object 4 is a font."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents 5 0 R >>" % resources,
            _FONT,
            contents,
        ]
    )


def flate_bomb(gib: int = 16) -> bytes:
    """A page whose content stream inflates to `gib` GiB of blanks after its text: a Flate stream
    of a Flate stream (/Filter [/FlateDecode /FlateDecode]), about 40 KB in the file. The inner
    stream is one fully flushed deflate block repeated, each inflating to 1 MiB, so that writing
    it takes no time where compressing GiBs would take minutes."""
    mib = 1 << 20
    head = _TEXT + b"\n"
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(head + b" " * (mib - len(head))) + deflate.flush(zlib.Z_FULL_FLUSH)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    blanks = deflate.compress(b" " * mib) + deflate.flush(zlib.Z_FULL_FLUSH)
    n = gib * 1024
    inner = b"\x78\xda" + first + blanks * (n - 1) + b"\x03\x00" + _adler32_blanks(head, n * mib)
    return _one_page(stream(zlib.compress(inner, 9), b"/Filter [/FlateDecode /FlateDecode] "))


def _adler32_blanks(head: bytes, size: int) -> bytes:
    """Adler-32 of `head` followed by blanks up to `size` bytes, in closed form (RFC 1950)."""
    mod, checksum = 65521, zlib.adler32(head)
    a, b, n, c = checksum & 0xFFFF, checksum >> 16, size - len(head), ord(" ")
    a2 = (a + n * c) % mod
    b2 = (b + n * a + c * n * (n + 1) // 2) % mod
    return ((b2 << 16) | a2).to_bytes(4, "big")


def deep_nesting(depth: int = 100_000) -> bytes:
    """A page whose resources hold arrays nested `depth` deep, and a dictionary nested as deep:
    a recursive parser without a depth limit runs out of stack on it."""
    arrays = b"[" * depth + b"1" + b"]" * depth
    dicts = b"<</A " * depth + b"1" + b">>" * depth
    return _one_page(
        stream(_TEXT),
        b"<< /Font << /F1 4 0 R >> /Properties << /Deep %s /Deeper %s >> >>" % (arrays, dicts),
    )


def page_tree_loop() -> bytes:
    """A page tree whose inner node lists the root among its /Kids: walking it never ends
    unless the walker notices the cycle."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 3 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >>"
            b" /Contents 5 0 R >>",
            _FONT,
            stream(_TEXT),
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 2 >>",  # back at its ancestor
        ]
    )


def many_pages(pages: int = 10_000) -> bytes:
    """`pages` pages in a balanced tree of 100 kids a node, all drawing one shared stream."""
    fanout = 100
    leaves_at = 6  # object numbers: 1 catalog, 2 root, 3 font, 4 content, then the inner nodes
    inner = (pages + fanout - 1) // fanout
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (leaves_at + i) for i in range(inner)), pages),
        _FONT,
        stream(_TEXT),
        b"null",  # object 5: unused, keeps the numbering plain
    ]
    first_leaf = leaves_at + inner
    for node in range(inner):
        kids = range(node * fanout, min(pages, (node + 1) * fanout))
        objects.append(
            b"<< /Type /Pages /Parent 2 0 R /Kids [%s] /Count %d >>"
            % (b" ".join(b"%d 0 R" % (first_leaf + k) for k in kids), len(kids))
        )
    for k in range(pages):
        objects.append(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
            b" /Contents 4 0 R >>" % (leaves_at + k // fanout)
        )
    return raw_pdf(objects)


SPECIALS = {
    "bomb": flate_bomb,
    "deep-nesting": deep_nesting,
    "page-tree-loop": page_tree_loop,
    "10000-pages": many_pages,
}
