"""Retrieve stage: retrievers x clauses -> hits -> weighted RRF -> (rerank) -> (LMM filter) -> modality quotas."""
