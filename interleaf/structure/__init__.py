"""Document structure: outline, numbered headings, section tree, contextual headers, table continuation, references."""

# Part of the parse fingerprint: a change to how sections are built re-parses (the quotes carry them).
STRUCTURE_VERSION = "1"
