"""Prefect flows: they only wire tasks, and read like a table of contents."""
