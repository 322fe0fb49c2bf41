"""Checking: puzzles, their targets and inputs, the checker, margins, the loader and mutation tests."""
