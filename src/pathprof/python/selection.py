"""Which source files pathprof instruments: ``--source``, ``--include``, ``--omit``.

The rules coverage.py users know. A file is measured when

1. it is a ``.py`` file, and no ``omit`` pattern matches it;
2. if ``include`` patterns are given, one of them matches it;
3. if ``source`` entries are given, it lies under one of them (a directory) or
   its module is one of them or inside one (a package or module name); otherwise
   it lies under one of the default directories (the script's directory, or the
   current directory for ``-m`` and console scripts);
4. it is not in the standard library, in site-packages, or part of pathprof —
   unless a ``source`` entry names it explicitly (a directory or module there).

Patterns are :mod:`fnmatch` patterns matched against the absolute file path; a
pattern that is not absolute matches anywhere below (``*/tests/*``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import site
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["Selection", "matches_patterns"]


def _norm(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.abspath(path)))


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _third_party_dirs() -> list[str]:
    dirs: set[str] = set()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        value = sysconfig.get_paths().get(name)
        if value:
            dirs.add(_norm(value))
    with contextlib.suppress(AttributeError):  # an old virtualenv's site.py lacks it
        dirs.update(_norm(p) for p in site.getsitepackages())
    user = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    if isinstance(user, str):
        dirs.add(_norm(user))
    dirs.add(_norm(os.path.dirname(os.path.dirname(__file__))))  # pathprof itself
    return sorted(dirs)


def _walk(root: str, named: bool, excluded: Sequence[str]) -> Iterator[str]:
    """``.py`` files under ``root`` (or ``root`` itself), in sorted order."""
    if os.path.isfile(root):
        yield root
        return
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(
            d for d in subdirs if not d.startswith(".") and d != "__pycache__"
            and (named or not any(_under(_norm(os.path.join(directory, d)), x)
                                  for x in excluded)))
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def _pattern(pattern: str) -> str:
    if os.path.isabs(pattern) or pattern.startswith("*"):
        return os.path.normcase(pattern)
    return os.path.normcase(os.path.join("*", pattern))


def matches_patterns(filename: str, include: Sequence[str] = (),
                     omit: Sequence[str] = ()) -> bool:
    """Whether ``filename`` passes ``--include`` and ``--omit`` patterns (as the
    selection reads them; for reports, which pick among the files measured)."""
    path = _norm(filename)
    if any(fnmatch.fnmatch(path, _pattern(p)) for p in omit):
        return False
    return not include or any(fnmatch.fnmatch(path, _pattern(p)) for p in include)


@dataclass
class Selection:
    """Decides, per module, whether to instrument it. See the module docstring."""

    source: Sequence[str] = ()
    include: Sequence[str] = ()
    omit: Sequence[str] = ()
    default_dirs: Sequence[str] = ()
    _source_dirs: list[str] = field(init=False, default_factory=list)
    _source_modules: list[str] = field(init=False, default_factory=list)
    _excluded: list[str] = field(init=False, default_factory=list)
    #: the ``source`` entries some wanted module or file fell under
    matched: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        # "a,b" names two sources, as coverage.py's --source takes them.
        self._entries: dict[str, str] = {}  # normalized dir or module -> as given
        for given in self.source:
            for entry in (part.strip() for part in given.split(",")):
                if not entry:
                    continue
                if os.path.isdir(entry) or os.sep in entry or entry.endswith(".py"):
                    self._source_dirs.append(_norm(entry))
                    self._entries[_norm(entry)] = entry
                else:
                    self._source_modules.append(entry)
                    self._entries[entry] = entry
        self._default = [_norm(d) for d in self.default_dirs]
        self._excluded = _third_party_dirs()
        self._include = [_pattern(p) for p in self.include]
        self._omit = [_pattern(p) for p in self.omit]

    def wants(self, module_name: str | None, filename: str | None) -> bool:
        if not filename or not filename.endswith(".py"):
            return False
        path = _norm(filename)
        if any(fnmatch.fnmatch(path, p) for p in self._omit):
            return False
        if self._include and not any(fnmatch.fnmatch(path, p) for p in self._include):
            return False
        named = [d for d in self._source_dirs if _under(path, d)]
        if module_name is not None:
            named += [m for m in self._source_modules
                      if module_name == m or module_name.startswith(m + ".")]
        if named:
            self.matched.update(self._entries[n] for n in named)
            return True
        if self._source_dirs or self._source_modules:
            return False
        if self._include:
            return not self._is_third_party(path)
        return (any(_under(path, d) for d in self._default)
                and not self._is_third_party(path))

    def named(self) -> list[str]:
        """The ``source`` entries, each directory or file made whole (normalized, as
        :meth:`wants` compares them) and each module name as given: what a data file
        records of where a run named its source. Empty where none was named (the
        default directories)."""
        return [*self._source_dirs, *self._source_modules]

    def unmatched(self) -> list[str]:
        """The ``source`` entries (as given) that no wanted module or file fell under."""
        return [given for given in dict.fromkeys(self._entries.values())
                if given not in self.matched]

    def files(self, search_path: Sequence[str] | None = None) -> Iterator[tuple[str | None, str]]:
        """Every source file the selection wants, found by walking the file system:
        ``(module name or None, path)``. Module names in ``source`` are looked up on
        ``search_path`` (default :data:`sys.path`) without importing anything.
        Hidden directories and ``__pycache__`` are not walked, nor third-party
        directories (a virtual environment inside the project) unless named."""
        roots: list[tuple[str | None, str]] = [(None, d) for d in self._source_dirs]
        for dotted in self._source_modules:
            relative = dotted.replace(".", os.sep)
            for entry in (sys.path if search_path is None else search_path):
                base = os.path.join(entry or ".", relative)
                if os.path.isdir(base) or os.path.isfile(base + ".py"):
                    roots.append((dotted, base if os.path.isdir(base) else base + ".py"))
                    break
        if not self._source_dirs and not self._source_modules:
            roots = [(None, d) for d in self._default]
        seen: set[str] = set()
        for module, root in roots:
            for path in _walk(root, named=module is not None or root in self._source_dirs,
                              excluded=self._excluded):
                name = None
                if module is not None:
                    rest = os.path.relpath(path, root)[: -len(".py")]
                    parts = [] if rest == "." else rest.split(os.sep)
                    if parts and parts[-1] == "__init__":
                        parts.pop()
                    name = ".".join([module, *parts]) if os.path.isdir(root) else module
                key = _norm(path)
                if key not in seen and self.wants(name, path):
                    seen.add(key)
                    yield name, path

    def is_third_party(self, filename: str) -> bool:
        """Whether ``filename`` is in the standard library, site-packages or pathprof."""
        return self._is_third_party(_norm(filename))

    def _is_third_party(self, path: str) -> bool:
        return any(_under(path, d) for d in self._excluded)
