"""Which packages the wheel holds.  Everything else is in pyproject.toml.

Found, not listed: every ``splice.*`` folder with an ``__init__.py`` (a hand-written list left
``splice.verify`` out, and the installed ``splice apply`` failed on its import).  The one name
added by hand is ``splice.grammars``, the top-level ``grammars/`` folder mapped into the package
(``[tool.setuptools.package-dir]``): pyproject's ``packages.find`` cannot find a package under
another name than its folder's, so this file exists for that one line."""
from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["splice", "splice.*"]), "splice.grammars"])
