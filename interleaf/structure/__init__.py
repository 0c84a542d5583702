"""Document structure: outline, numbered headings, section tree, contextual headers, table continuation, references.

Three stages use it, each a part: parse builds the tree, index writes paths and table context into the
texts, retrieve resolves a question's references. Each stage's fingerprint hashes the modules it runs
(with what they import), so a change to how questions are resolved does not re-parse 1,000 pages.
"""

_OF = "interleaf.structure."
PARSE_MODULES = tuple(_OF + m for m in ("outline", "headings", "sections", "furniture", "title"))
# references.label_line feeds the loaded corpus retrieve searches, not the stored index: retrieve hashes it
INDEX_MODULES = tuple(_OF + m for m in ("headings", "sections", "outline", "tables", "context"))
RETRIEVE_MODULES = tuple(_OF + m for m in ("headings", "references", "scopes", "pages"))
