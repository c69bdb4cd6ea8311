"""The probe's parameter kinds, one module each; ``base`` holds the class they extend and the
registry (every kind this package defines).  See splice/probe/__init__.py."""
