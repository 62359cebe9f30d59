"""Figure recipes, the verification report and the ``slr`` command line."""
