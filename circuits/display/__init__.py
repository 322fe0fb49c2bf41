"""Display: rich terminal rendering, HTML pages and check reports (the only modules that import rich)."""
