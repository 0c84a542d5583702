"""The parse stage: a PDF's bytes in, pages and quotes (text, figures, tables, equations) out.

Backends: `layout` (rapid-layout + text layer + RapidOCR, offline), `mineru` (MinerU 4 run here),
`content_list` (MinerU 2.x/3.x `<name>_content_list.json` files written elsewhere)."""
