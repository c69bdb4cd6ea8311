"""splice.report: rendering only (rich tables, JSON shaping, PNG).  It is handed results by the
command layer and computes nothing of its own."""
