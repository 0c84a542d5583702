"""The offline default parser: rapid-layout regions, the PDF's text layer, RapidOCR where it is unusable."""
