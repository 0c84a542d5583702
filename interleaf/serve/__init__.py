"""`interleaf serve`: the warehouse over HTTP.

An OpenAI-compatible chat endpoint whose answers carry their citations as data, Interleaf's own
API (ask, quotes, documents and their pages, uploads and their ingest jobs) and a web page, with
API keys, a per-key rate limit and loopback by default. `app.create_app` builds the ASGI app;
`main.serve` runs it with uvicorn. Importing this package loads nothing of it (config reads
`serve/config.py` only).
"""
