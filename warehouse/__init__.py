"""The warehouse: typed Parquet tables per stage fingerprint, exposed as DuckDB views."""

from warehouse.store import Warehouse

__all__ = ["Warehouse"]
