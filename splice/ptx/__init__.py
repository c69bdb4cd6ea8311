"""splice.ptx."""
