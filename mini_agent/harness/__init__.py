"""Harness: the code that does IO (files, processes)."""
