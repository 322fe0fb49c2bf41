"""Grading a class: every submission checked against the shipped puzzles, each in a process of its own."""
