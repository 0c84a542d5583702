"""Retrieval evaluation: recall@k of gold evidence, matched as the corpus README defines."""
