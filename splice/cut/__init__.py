"""splice.cut."""
