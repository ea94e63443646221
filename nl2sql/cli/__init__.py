"""Command-line entry points; each module's ``main(argv=None) -> int`` is a console script."""
