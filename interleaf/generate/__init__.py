"""Generate stage: interleaved, cited answers from a retrieved context (MMDocRAG §2.1, §3)."""
