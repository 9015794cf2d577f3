"""torchlint: static analysis for PyTorch programs."""

__version__ = "0.1.0"
DOCS_URL = "https://github.com/torchlint/torchlint/blob/main/docs/rules/{code}.md"
