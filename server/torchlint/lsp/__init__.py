"""`torchlint server`: the language server, over stdio."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="torchlint server", description="Start the torchlint language server on stdio."
    )
    parser.add_argument(
        "--stdio", action="store_true", help="talk LSP on stdin/stdout (the default and only transport)"
    )
    parser.add_argument("--log-file", help="write the server's log here (default: stderr, warnings only)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every message")
    args = parser.parse_args(argv)
    level = logging.DEBUG if args.verbose else logging.WARNING
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=level)
    else:
        logging.basicConfig(stream=sys.stderr, level=level)
    try:
        from torchlint.lsp.server import create
    except ImportError as exc:
        print(
            f"torchlint: error: the language server needs pygls and lsprotocol: pip install 'torchlint[server]' ({exc})",
            file=sys.stderr,
        )
        return 2
    create().start_io()
    return 0
