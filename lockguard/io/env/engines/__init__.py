"""Install engines: what puts the lock's files into a prefix inside a clean-install's transaction.
The transaction has moved every outgoing file into the quarantine before an engine runs, and
verifies by effect after it (RECORD files, import smoke); an engine only installs the locked files
it is handed (hashes required, no dependency resolution: the lock is the resolution) and never
uninstalls anything. uv (the default, engines/uv.py) and pip (engines/pip.py) install Python
distributions; rattler (engines/rattler.py) installs a conda lock's records."""
