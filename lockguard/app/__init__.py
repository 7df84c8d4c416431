"""The sessions: each wires io/ to the pure core for one command (resolve, check, clean-install,
restore, doctor, fleet, ...). The commands in lockguard.cli parse options into a request, call a
session and render what it returns; the sessions never import the cli."""
