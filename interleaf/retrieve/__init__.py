"""Retrieve stage: retrievers x clauses -> hits -> weighted RRF -> (rerank) -> modality quotas."""
