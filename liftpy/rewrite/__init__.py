"""Rewrite rules: semantics-preserving transformations that turn one high-level program into many
low-level variants (tiling, work mapping, vectorization, address spaces, image placement)."""
