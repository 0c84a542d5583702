"""OCR engines: an image in, positioned lines of text out (`OcrEngine`), one file per engine."""
