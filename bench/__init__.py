"""torchlint's benchmark harness: `python -m bench --help`."""
