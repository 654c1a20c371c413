"""Benchmarks (``python bench/wordcount.py``); a package so tests can import them."""
