"""Package sources: HTTP with a cache, PEP 691/503 index pages, PEP 658 / range-request / sdist /
PEP 517 metadata, and conda channels through rattler."""
