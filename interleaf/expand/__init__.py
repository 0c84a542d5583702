"""Expand stage: a question becomes weighted clauses (MMDocRAG §4.8 multi-clause queries)."""
