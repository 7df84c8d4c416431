"""Compatibility knowledge as data (TOML); shipped inside lockguard as lockguard.constraints."""
