"""Probes for tensor operations: broadcasting, calls to functional ops, cat/stack, indexing rank,
matmul/linear, view/reshape."""
