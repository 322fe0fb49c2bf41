"""`python -m circuits.cli`: the `circuits` command."""

from circuits.cli import main

raise SystemExit(main())
