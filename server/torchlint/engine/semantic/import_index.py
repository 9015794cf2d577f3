"""Who imports a module, who calls a name: an inverted index over every project file.

Whole-project questions ("does any file import me?", "which files call
init_process_group?") used to read and summarise every file whose text held the
name. Here each file gets cheap facts once, from regular expressions over its text
(no parse): the words of its import statements and the names it calls. They are a
superset of what its `ast` summary would say (words in strings and comments count
too), so the index names every file a full scan would, and the project then
confirms the candidates with their summaries: an answer costs its candidates, not
the tree. Facts are kept per file by stat and content hash, on disk between runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from torchlint.engine.semantic.names import relative_module

_WORD = re.compile(r"\w+")
# `from .a.b import (x, y)`: the module with its dots, then the names (a parenthesised list may span lines)
_FROM = re.compile(r"\bfrom\s+(\.*)\s*(\w[\w.]*)?\s+import\s*(\([^)]*\)|[^\n]*)")
# `import a.b as c, d`: the words up to the end of the logical line
_IMPORT = re.compile(r"\bimport\s+([^\n;]*)")
_BEFORE_CALL = " \t\r\n\f\\)"  # what may stand between a called name and its `(` (`(obj.f)(x)`, `f \` newline)
VERSION = 1  # of the facts' format on disk


@dataclass(frozen=True)
class Facts:
    """What a file's text can import and call (a superset: words, not resolved names)."""

    words: frozenset[str]  # every word of its absolute imports (modules, names, aliases)
    relative: tuple[tuple[int, str], ...]  # (level, module) of each `from .x import` (the package resolves it)
    called: frozenset[str]  # every name followed by `(`

    def import_words(self, package: str) -> set[str]:
        """The words of every module this file may import, its relative imports resolved in `package`."""
        words = set(self.words)
        for level, module in self.relative:
            base = relative_module(package, level, module or None)
            if base is not None:
                words.update(base.split("."))
        return words


def facts(text: str) -> Facts:
    """A file's facts, in time linear in its length: only the lines holding `import` meet a regex."""
    words: set[str] = set()
    relative: set[tuple[int, str]] = set()
    for lines in _import_lines(text):
        statement = lines.replace("\\\n", " ")  # line continuations join a statement's words
        for m in _FROM.finditer(statement):
            module = m.group(2) or ""
            if m.group(1):
                relative.add((len(m.group(1)), module))
            else:
                words.update(_WORD.findall(module))
            words.update(_WORD.findall(m.group(3)))
        for m in _IMPORT.finditer(statement):
            words.update(_WORD.findall(m.group(1)))
    return Facts(frozenset(words), tuple(sorted(relative)), frozenset(_called(text)))


def _import_lines(text: str) -> Iterator[str]:
    """Each logical line that holds the word `import`, with the lines it continues and a parenthesised
    list that follows it."""
    pos = text.find("import")
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        while start >= 2 and text[start - 2] == "\\":  # continues the line above
            start = text.rfind("\n", 0, start - 2) + 1
        end = text.find("\n", pos)
        while end > 0 and text[end - 1] == "\\":
            end = text.find("\n", end + 1)
        end = len(text) if end == -1 else end
        opened = text.rfind("(", pos, end)
        if opened != -1 and text.find(")", opened, end) == -1:
            close = text.find(")", opened)
            end = len(text) if close == -1 else close + 1
        yield text[start:end]
        pos = text.find("import", end)


def _called(text: str) -> set[str]:
    """Every name right before a `(`, give or take blanks, line continuations, a `)` or a comment."""
    out: set[str] = set()
    chunks = text.split("(")
    for chunk in chunks[:-1]:
        while True:
            chunk = chunk.rstrip(_BEFORE_CALL)
            i = len(chunk)
            while i and (chunk[i - 1].isalnum() or chunk[i - 1] == "_"):
                i -= 1
            if i < len(chunk):
                out.add(chunk[i:])
            line = chunk[chunk.rfind("\n") + 1 :]
            if "#" not in line:  # `f  # comment` then `(` on the next line: the name before the comment too
                break
            chunk = chunk[: len(chunk) - len(line) + line.rfind("#")]
    return out


class ImportIndex:
    """Facts of every file of one project, and the inverted index word -> files over them."""

    def __init__(self, read: Callable[[Path], str | None], package_of: Callable[[Path], str]) -> None:
        self._read = read  # a file's text as the summaries see it (a notebook's code cells)
        self._package_of = package_of
        self._facts: dict[Path, tuple[object, str, Facts]] = {}  # path -> (stat key, content hash, facts)
        self._importing: dict[str, set[Path]] = {}
        self._calling: dict[str, set[Path]] = {}
        self._indexed: dict[Path, Facts] = {}  # the facts each file is indexed under now
        self.changed = False  # facts were made since the disk copy was read

    def update(self, path: Path, key: object, text: str | None = None) -> None:
        """Index `path` as of `key` (its stat, or an editor text's hash); reads it only when `key` changed."""
        cached = self._facts.get(path)
        if cached is None or cached[0] != key:
            if text is None:
                text = self._read(path)
            digest = hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).hexdigest()
            if cached is not None and cached[1] == digest:
                found = cached[2]  # touched, same content
            else:
                found = facts(text) if text is not None else Facts(frozenset(), (), frozenset())
                self.changed = True
            self._facts[path] = (key, digest, found)
        self._index(path, self._facts[path][2])

    def _index(self, path: Path, found: Facts) -> None:
        if self._indexed.get(path) is found:
            return
        self.remove(path)
        self._indexed[path] = found
        for word in found.import_words(self._package_of(path)):
            self._importing.setdefault(word, set()).add(path)
        for name in found.called:
            self._calling.setdefault(name, set()).add(path)

    def has(self, path: Path) -> bool:
        return path in self._indexed

    def remove(self, path: Path) -> None:
        old = self._indexed.pop(path, None)
        if old is None:
            return
        for word in old.import_words(self._package_of(path)):
            self._importing.get(word, set()).discard(path)
        for name in old.called:
            self._calling.get(name, set()).discard(path)

    def keep_only(self, paths: Iterable[Path]) -> None:
        """Forget files that are no longer part of the project (deleted, now excluded)."""
        keep = set(paths)
        for path in [p for p in self._indexed if p not in keep]:
            self.remove(path)
            self._facts.pop(path, None)

    def reindex(self) -> None:
        """Packages may have changed (an `__init__.py` created): resolve every relative import again."""
        indexed = dict(self._indexed)
        self._indexed.clear()
        self._importing.clear()
        self._calling.clear()
        for path, found in indexed.items():
            self._index(path, found)

    def importing(self, word: str) -> list[Path]:
        """Files with an import statement naming `word` (a candidate importer of a module of that name)."""
        return sorted(self._importing.get(word, ()))

    def calling(self, name: str) -> list[Path]:
        """Files that may call a function or method named `name`."""
        return sorted(self._calling.get(name, ()))

    # -- on disk -----------------------------------------------------------------------
    def load(self, file: Path) -> None:
        """Facts saved by an earlier run (a damaged or foreign file is ignored)."""
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            if data.get("version") != VERSION:
                return
            for path, (key, digest, words, relative, called) in data["files"].items():
                found = Facts(frozenset(words), tuple((int(lv), str(m)) for lv, m in relative), frozenset(called))
                self._facts[Path(path)] = (tuple(key), digest, found)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self._facts.clear()

    def save(self, file: Path) -> None:
        """Write the facts of files read from disk (editor texts are not saved); atomic, best effort."""
        files = {
            str(p): [list(k), d, sorted(f.words), [list(r) for r in f.relative], sorted(f.called)]
            for p, (k, d, f) in self._facts.items()
            if isinstance(k, tuple) and k[0] != "overlay"
        }
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".index-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"version": VERSION, "files": files}, f)
            os.replace(tmp, file)
            self.changed = False
        except OSError:
            return
