"""Benchmarks of convoeval (not tests): see benchmarks/README.md and benchmarks/RESULTS.md."""
