"""The `torchlint` command line: check, rule, rules (server and probe delegate)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from torchlint import __version__
from torchlint.config import ConfigError, ConfigResolver, Overrides, check_code, normalize_codes

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# Subcommands that own their argument parsing, imported only when used.
DELEGATED = {"server": "torchlint.lsp", "probe": "torchlint.probe.cli"}


def _codes(value: str) -> list[str]:
    return normalize_codes(value.split(","))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torchlint", description="Static analysis for PyTorch programs.")
    p.add_argument("--version", action="version", version=f"torchlint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("check", help="check files or directories (default: .)")
    c.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    c.add_argument("--select", type=_codes, help="only these codes or prefixes (e.g. TL1,TL601)")
    c.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    c.add_argument("--extend-select", type=_codes, help="add these codes to the configured selection")
    c.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    c.add_argument(
        "--unsafe-fixes",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="--fix and --diff apply unsafe fixes too (default: the `unsafe-fixes` config key)",
    )
    c.add_argument("--diff", action="store_true", help="print what --fix would change as a diff; change nothing")
    c.add_argument("--output-format", choices=["text", "json", "sarif", "github"], default="text")
    c.add_argument(
        "--statistics",
        action="store_true",
        help="count findings per rule and per category, and those the default selection hides",
    )
    c.add_argument(
        "--show-settings", action="store_true", help="print the effective settings for the first PATH; check nothing"
    )
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    c.add_argument("--config", type=Path, help="use this config file for every checked file")
    c.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (0: one per core)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary line")
    c.add_argument("--no-cache", action="store_true", help="ignore and do not write .torchlint_cache/")

    sub.add_parser("clean", help="remove the cache directory (.torchlint_cache/)")

    sub.add_parser("rules", help="list every rule")
    r = sub.add_parser("rule", help="show a rule's documentation")
    r.add_argument("code")
    sub.add_parser("server", help="start the language server (stdio)", add_help=False)
    sub.add_parser("probe", help="run a script under instrumentation", add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        import importlib

        code: int = importlib.import_module(DELEGATED[argv[0]]).main(argv[1:])
        return code
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "clean":
            return _clean()
        if args.command == "rules":
            return _rules()
        if args.command == "rule":
            return _rule(args.code)
    except ConfigError as exc:
        print(f"torchlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    parser.print_help()
    return EXIT_ERROR


def _clean() -> int:
    from torchlint import cache

    directory = cache.default_dir()
    print(f"removed {directory}" if cache.clean(directory) else f"no cache at {directory}")
    return EXIT_CLEAN


def _rules() -> int:
    from torchlint.registry import rules

    for code, cls in rules().items():
        fixable = "fix" if cls.fixable() else "   "
        default = "default" if cls.by_default() else "opt-in "
        print(
            f"{code}  {cls.category:<13}  {default}  {cls.severity.value:<7}  {fixable}  {cls.name:<40}  {cls.summary}"
        )
    return EXIT_CLEAN


def _rule(code: str) -> int:
    from torchlint.docs import rule_markdown
    from torchlint.registry import rules

    cls = rules().get(code.upper())
    if cls is None:
        print(f"torchlint: error: unknown rule {code!r} (see `torchlint rules`)", file=sys.stderr)
        return EXIT_ERROR
    print(rule_markdown(cls))
    return EXIT_CLEAN


def _first_sentence(text: str) -> str:
    """The measurement an opt-in reason opens with (up to a full stop before a capital)."""
    found = re.match(r"(.+?\.)\s+[A-Z]", text, re.S)
    return found.group(1) if found else text


def _show_settings(args: argparse.Namespace, resolver: ConfigResolver) -> int:
    """The settings `check` uses for the first PATH, after the command line's own choices: both
    ask the one resolver (ConfigResolver.resolve)."""
    from torchlint.engine.rule import CATEGORIES, DEFAULT_CATEGORIES
    from torchlint.registry import rules

    path = Path(args.paths[0])
    if not path.exists():
        print(f"torchlint: error: {path}: no such file or directory", file=sys.stderr)
        return EXIT_ERROR
    overrides = _overrides(args)
    resolved = resolver.resolve(path, overrides)
    settings, selection, version = resolved.settings, resolved.selection, resolved.torch
    catalogue = rules()
    enabled = selection.codes
    left_out = [c for c in settings.widened().selection(path, catalogue, overrides).codes if c not in enabled]
    default = ", ".join(c for c in CATEGORIES if c in DEFAULT_CATEGORIES)
    chosen = list(overrides.select) if overrides.select else settings.select
    lines = [
        f"path: {path}",
        f"config: {settings.source or '(none: defaults)'}",
        f"select: {chosen if chosen is not None else f'(default: {default})'}",
        f"extend-select: {[*settings.extend_select, *overrides.extend_select]}",
        f"ignore: {[*settings.ignore, *overrides.ignore]}",
        f"per-file-ignores: {settings.per_file_ignores}",
        f"severity: { {k: v.value for k, v in selection.severity.items()} }",
        f"enabled rules ({len(enabled)} of {len(catalogue)}): {', '.join(enabled)}",
        f"left out by the default selection: {', '.join(left_out) or '(none)'}",
        "opt-in by measured precision (why: `torchlint rule CODE`): "
        + (", ".join(code for code, cls in catalogue.items() if cls.opt_in) or "(none)"),
        *(f"  {code}: {_first_sentence(cls.opt_in)}" for code, cls in catalogue.items() if cls.opt_in),
        f"target torch: {version} ({version.source})",
    ]
    print("\n".join(lines))
    return EXIT_CLEAN


def _overrides(args: argparse.Namespace) -> Overrides:
    return Overrides(args.select, args.ignore or (), args.extend_select or ())


def _check(args: argparse.Namespace) -> int:
    from torchlint.engine.semantic.project import files_unchanging
    from torchlint.registry import known_codes

    for option in ("select", "ignore", "extend_select"):
        for code in getattr(args, option) or ():
            check_code(code, known_codes(), f"--{option.replace('_', '-')}")
    if args.fix and args.diff:
        raise ConfigError("--fix and --diff cannot be used together")
    with files_unchanging():  # what the run learns of the file system holds for all of it (roots, modules)
        return _check_files(args)


def _check_files(args: argparse.Namespace) -> int:
    from torchlint import checker
    from torchlint.findings import Finding
    from torchlint.progress import Progress
    from torchlint.registry import known_codes
    from torchlint.reporters import FORMATS, text

    resolver = ConfigResolver(known_codes(), args.config)
    if args.show_settings:
        return _show_settings(args, resolver)
    mode = "fix" if args.fix else "diff" if args.diff else "check"
    # --statistics in check mode also runs what the default selection leaves out (in the same parse and
    # traversal, so it costs little) and counts those findings without reporting them. --fix/--diff
    # never run them: they would change code the user did not select.
    count_hidden = args.statistics and mode == "check"
    try:
        from torchlint import cache

        cache_dir = None if args.no_cache else cache.default_dir()
        paths = [Path(p) for p in args.paths]
        overrides = _overrides(args)
        jobs = checker.plan(paths, resolver, mode, overrides, cache_dir, args.unsafe_fixes)
        if count_hidden:
            selected = {job.path: set(job.codes) for job in jobs}
            wide = ConfigResolver(known_codes(), args.config, widen=True)
            jobs = checker.plan(paths, wide, mode, overrides, cache_dir, args.unsafe_fixes)
    except FileNotFoundError as exc:
        print(f"torchlint: error: {exc}: no such file or directory", file=sys.stderr)
        return EXIT_ERROR
    workers = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    checker.tune_gc()
    progress = Progress(enabled=False if args.quiet else None)
    result = checker.run(jobs, workers, progress)
    progress.close()

    hidden: list[Finding] = []
    if count_hidden:
        for r in result.files:
            codes = selected.get(r.path, set()) | {"TL000"}
            hidden.extend(f for f in r.findings if f.code not in codes)
            r.findings = [f for f in r.findings if f.code in codes]
    findings = result.findings
    out = sys.stdout
    if args.diff:
        out.write("".join(r.diff for r in result.files))
    colour = out.isatty() and "NO_COLOR" not in os.environ
    unsafe = result.unsafe_paths
    if args.output_format == "text":
        out.write(
            text.render(
                findings,
                colour=colour,
                fixed=result.fixed,
                summary=not args.quiet,
                unsafe_paths=unsafe,
                dry_run=args.diff,
            )
        )
    else:
        out.write(FORMATS[args.output_format](findings))
    if args.statistics:
        (sys.stderr if args.output_format != "text" else out).write(
            text.statistics(findings, hidden if count_hidden else None, unsafe)
        )
    failed_writes = [r.error for r in result.files if r.error]
    for e in failed_writes:
        print(f"torchlint: error: {e}", file=sys.stderr)
    if failed_writes:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
