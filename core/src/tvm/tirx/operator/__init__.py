"""Operators: tile primitives and their dispatch."""
