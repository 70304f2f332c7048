"""Example models for zshard-export (used by its tests and bench/peer)."""
