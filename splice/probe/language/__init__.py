"""The probe-spec language: what a spec file says and how it is checked (docs/probe-spec.md).

``document`` reads and validates a spec into frozen records (``load_spec``, ``parse_spec``);
``errors`` the error type and the key-path context every check reports through; ``fills`` the
seeded fill rules and the values a key may hold; ``dtypes`` the host values of the PTX types;
``entry`` the spec against the entry it launches.  What each parameter kind adds to the language
lives with the kind (``splice.probe.kinds``).
"""
