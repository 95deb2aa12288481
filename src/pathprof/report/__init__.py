"""Renderers: each takes plain data and returns something to print or write."""
