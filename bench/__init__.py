"""Benchmarks of the Faceoff solvers against their peers (see bench/README.md)."""
