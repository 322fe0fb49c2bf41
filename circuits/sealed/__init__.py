"""The sealed verdict: a learner's file runs in a fenced child process, and only its answer comes back, as data.

answer   the loader's side: run a file there, rebuild its answer here (a code puzzle's functions called there)
sandbox  the fenced process, started afresh (grading) or forked from a warm zygote (check, watch, pytest)
provision  what that process is given: the runtime copy, the paths it may read, its limits, its environment
processes  the process seen from here: a child's pipe and clock, the cold start, the warm zygote
child    what runs in it: the file, the answer as data, the zygote's fork loop
walls    the fence it puts up first: rlimits, Landlock, seccomp, no capabilities, death with its parent
codec    answers as plain data (numbers, polynomial coefficients), encoded there and decoded here, bounded
calls    puzzle 00 graded by replay: the calls a compare makes, recorded here, made there
See docs/fence.md.
"""
