"""The real-world precision ledger (issue 26): `python bench/realworld/run.py --help`."""
