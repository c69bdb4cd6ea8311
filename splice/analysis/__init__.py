"""splice.analysis."""
