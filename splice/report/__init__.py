"""splice.report."""
