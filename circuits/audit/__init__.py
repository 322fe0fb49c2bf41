"""An author's audit: every small edit of a reference solution (its mutants) must fail the puzzle's check, unless
the allow-list or a rule of equivalence spares it. author.run is `circuits audit`; mutants makes the mutants,
run.audit judges them, equivalence holds the rules."""
