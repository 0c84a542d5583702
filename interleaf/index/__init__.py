"""Index stage: retrievers over quotes, each storing what it needs in the warehouse."""
