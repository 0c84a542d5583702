"""Text utilities shared by every stage: one tokenizer, one reference pattern, one set of kinds."""
