"""Prefect tasks: thin wrappers that read and write the warehouse around the pure stages."""
