"""`python -m circuits ...`: the `circuits` command, for when the script is not on PATH (or is another install's)."""

import sys

from circuits.cli import main

sys.exit(main())
