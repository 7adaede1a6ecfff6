"""Seed-compatible location of the script builder."""
