"""The stage runner: plans ordered from what stages declare, the one wrapper that reads, writes,
caches and records every unit around a pure stage, documents' chains, and which units are done."""
