"""The describe stage: every image quote as image, OCR-text, table Markdown and VLM-text (MMDocRAG §2.1)."""
