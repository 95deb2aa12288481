"""What a data file keeps once per version of a measured file: the contract of the
module's functions and the module's source text, each compressed.

Every run of the same code repeats both, and they are most of what a data file
holds (measured on ``import networkx``: 2 MB of contracts and 3.9 MB of source
against a few kilobytes of counts). The store keeps each once — a contract per
file and source hash, a source per source hash — as zlib-compressed UTF-8, and
hands them back decompressed when first asked for.

- :class:`Packed` is one such text, held in either form and made into the other
  when asked for (a run compresses what the data file lacks, a report decompresses
  what it reads, and copying a file's rows into another does neither).
- :class:`ModuleContract` is the contract of one module as the generated code
  handed it to the runtime (:meth:`pathprof.contract.ModuleInfo.encode`'s text),
  which the profiles of its functions share: saving a run encodes nothing again.
- :class:`Sources` maps ``(file, source hash)`` to source text, one text per hash.

Standard library only (and the contract): the runtime's process saves with it.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence

from pathprof.contract import ContractError, FunctionInfo, ModuleInfo
from pathprof.data.checks import check_function

__all__ = ["LEVEL", "MAX_RATIO", "MAX_TEXT", "ModuleContract", "Packed", "PackedError",
           "Sources", "inflation_bound"]

#: zlib's level. Measured on networkx's 261 sources (3.9 MB) and 285 contracts (2.1 MB)
#: on a loaded 2-CPU machine, best of 7: level 1 makes 1.74 MB in 0.17 s, 3 1.63 MB in
#: 0.18 s, 4 1.54 MB in 0.25 s, 6 (zlib's default) 1.48 MB in 0.38 s. A run compresses
#: only what the file it replaces or adds to does not hold already.
LEVEL = 4

#: What a compressed text may inflate to. A data file may come from someone else: a
#: blob of 125 KB of zlib can hold 100 MB of blanks (CRC-32 and all), which reports
#: would read line by line. zlib at :data:`LEVEL` makes real sources 3 to 22 times
#: smaller (measured on the 11,967 sources over 1 KB of the standard library and
#: site-packages here: 21.6 at most) and contracts 4 to 9 times (the standard
#: library's): a text is read only up to :data:`MAX_RATIO` times its compressed size
#: (and at least :data:`MIN_BOUND` bytes), never past :data:`MAX_TEXT` (the largest
#: source seen was 3.9 MB), so reading a file costs what its size says. A source
#: more compressible than that is not kept (reports read it from its file, as a
#: source the data file does not hold).
MAX_RATIO = 64
MIN_BOUND = 1 << 20
MAX_TEXT = 64 << 20


def inflation_bound(compressed: int) -> int:
    """The most bytes that ``compressed`` bytes of zlib may inflate to here."""
    return min(MAX_TEXT, max(MIN_BOUND, MAX_RATIO * compressed))


class PackedError(ValueError):
    """Compressed data that does not hold a text (damaged, or not pathprof's)."""


class Packed:
    """A text the data file keeps compressed (zlib, UTF-8): made from the text or from
    the compressed bytes, the other made when first asked for, and kept; or made
    from a ``load`` function, called when either is first asked for (a run's
    sources: one the data file it replaces holds already is never read, and the
    others are read one at a time as they are compressed, not all held at once)."""

    __slots__ = ("_data", "_load", "_size", "_text")

    def __init__(self, text: str | None = None, data: bytes | None = None,
                 load: Callable[[], str | None] | None = None) -> None:
        if text is None and data is None and load is None:
            raise TypeError("Packed needs a text, its compressed data or a way to load it")
        self._text = text
        self._data = data
        self._load = load
        #: the text's length in UTF-8, when it was compressed here
        self._size: int | None = None

    @property
    def unread(self) -> bool:
        """Made from a ``load`` function that was not called yet."""
        return self._text is None and self._data is None

    def adopt(self, other: Packed) -> None:
        """Take ``other``'s compressed data as this text, unread (the caller knows
        they hold the same text: a source of the same hash)."""
        if self.unread and other._data is not None:
            self._data = other._data
            self._load = None

    def _loaded(self) -> str:
        text = self._load() if self._load is not None else None
        if text is None:
            raise PackedError("the text is no longer at hand (its file changed)")
        self._load = None
        return text

    @property
    def text(self) -> str:
        """The text; :class:`PackedError` if the data does not decompress to UTF-8
        (or, unread, if ``load`` finds no text)."""
        if self._text is None:
            if self._data is None:
                self._text = self._loaded()
                return self._text
            self._text = _inflated(self._data)
        return self._text

    @property
    def data(self) -> bytes:
        """The compressed text (compressed now if it was not)."""
        if self._data is None:
            # (unread: read, compressed, and let go)
            raw = (self._loaded() if self._text is None else self._text).encode()
            self._data = zlib.compress(raw, LEVEL)
            self._size = len(raw)
        return self._data

    @property
    def readable(self) -> bool:
        """Whether the compressed text (compressed now if it was not) is within
        :func:`inflation_bound` of its size, as reading checks it: known where it was
        compressed here (else it was read back from a data file, and checked then)."""
        data = self.data
        return self._size is None or self._size <= inflation_bound(len(data))

    @property
    def crc(self) -> int:
        """CRC-32 of the compressed data: the data file keeps it beside the data, so
        that a damaged blob is found without decompressing it."""
        return zlib.crc32(self.data)

    def forget_text(self) -> None:
        """Keep the compressed form only, if it is at hand (the text is made again
        when asked for)."""
        if self._data is not None:
            self._text = None

    def checksum(self) -> int:
        """Adler-32 of the text's UTF-8 bytes: zlib's own check of what it
        decompresses, read from the end of the compressed data when only that is at
        hand (nothing decompressed)."""
        if self._data is not None:
            return int.from_bytes(self._data[-4:], "big")
        return zlib.adler32(self.text.encode())

    def same(self, other: Packed) -> bool:
        """Whether ``other`` holds the same text (compared, or where either is at hand
        compressed only, by checksum); if so and this one is not compressed yet, it
        takes ``other``'s compressed data: nothing to compress again."""
        if other is self:
            return True
        if self._text is not None and other._text is not None:
            equal = self._text == other._text
        else:
            equal = self.checksum() == other.checksum()
        if equal and self._data is None:
            self._data = other._data
        return equal


def _inflated(data: object) -> str:
    """The text ``data`` holds, read no further than :func:`inflation_bound` of its
    size: :class:`PackedError` if it holds more, or is not zlib of UTF-8 text."""
    if not isinstance(data, bytes):
        raise PackedError(f"{type(data).__name__}, not compressed text")
    bound = inflation_bound(len(data))
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data, bound + 1)
        if len(raw) > bound or inflater.unconsumed_tail:
            raise PackedError(f"it inflates to more than {bound:,} bytes from "
                              f"{len(data):,} (more than pathprof's texts ever do)")
        raw += inflater.flush()
        if not inflater.eof:
            raise PackedError("incomplete or truncated stream")
        if inflater.unused_data:
            raise PackedError(f"{len(inflater.unused_data):,} bytes after the end of "
                              "the compressed text")
        return raw.decode()
    except (zlib.error, UnicodeDecodeError) as err:
        raise PackedError(str(err)) from None


class ModuleContract:
    """The contract of one measured module's functions, with the file and source hash
    it was built from, as one :class:`Packed` text (what
    :meth:`pathprof.contract.ModuleInfo.encode` wrote), decoded once when first asked
    for. Functions are named by their position in it."""

    __slots__ = ("_digest", "_info", "file", "packed", "source_hash")

    def __init__(self, file: str, source_hash: str, packed: Packed,
                 info: ModuleInfo | None = None) -> None:
        self.file = file
        self.source_hash = source_hash
        self.packed = packed
        self._info = info
        self._digest: str | None = None

    @property
    def digest(self) -> str:
        """What names this contract: the SHA-256 of its compressed text (what the data
        file keeps), so that analyses of its functions can be kept by it
        (:mod:`pathprof.analysis.memo`)."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.packed.data).hexdigest()[:32]
        return self._digest

    @classmethod
    def of_functions(cls, file: str, source_hash: str, functions: Sequence[FunctionInfo]
                     ) -> ModuleContract:
        """A contract holding ``functions`` (positions in their order), for profiles
        that came with no module's contract."""
        info = ModuleInfo(file, f"{file}:{source_hash}", source_hash, tuple(functions))
        return cls(file, source_hash, Packed(info.encode()), info)

    def info(self) -> ModuleInfo:
        """The decoded contract: :class:`~pathprof.contract.ContractError` if it is
        not a module's, :class:`PackedError` if it does not decompress."""
        if self._info is None:
            self._info = ModuleInfo.decode(self.packed.text)
            self.packed.forget_text()  # decoded, it is garbage
        return self._info

    def function(self, position: int) -> FunctionInfo:
        """The function at ``position``, decoded and checked (:class:`ContractError`
        for a position it does not have or metadata that breaks the invariants)."""
        functions = self.info().functions
        if not isinstance(position, int) or not 0 <= position < len(functions):
            raise ContractError(f"no function at position {position!r} of "
                                f"{len(functions)}")
        meta = functions[position]
        meta.check()
        check_function(meta)  # (every field's type and range: read from a file)
        return meta

    def holds(self, meta: FunctionInfo, position: int) -> bool:
        """Whether ``meta`` is this contract's function at ``position`` (the very
        object: a profile whose metadata was replaced is not)."""
        if self._info is None:
            return False
        functions = self._info.functions
        return 0 <= position < len(functions) and functions[position] is meta

    def outlines(self) -> list[tuple[str, int, int, int, int]]:
        """Every function's :attr:`~pathprof.contract.FunctionInfo.outline`."""
        return [meta.outline for meta in self.info().functions]


class Sources(Mapping[tuple[str, str], str]):
    """Source texts by ``(file, source hash)``, each text kept once per hash as a
    :class:`Packed` text (decompressed when first asked for)."""

    def __init__(self, texts: Mapping[tuple[str, str], str] | None = None) -> None:
        self._files: dict[tuple[str, str], None] = {}
        self._packed: dict[str, Packed] = {}
        if isinstance(texts, Sources):
            self.update(texts)
        elif texts:
            for (file, digest), text in texts.items():
                self.add(file, digest, Packed(text))

    def add(self, file: str, digest: str, packed: Packed) -> None:
        """The source of ``file`` at ``digest`` (kept if one of that hash is here)."""
        self._files[(file, digest)] = None
        self._packed.setdefault(digest, packed)

    def update(self, other: Sources) -> None:
        """Add ``other``'s sources, as they are (nothing decompressed)."""
        for file, digest in other._files:
            self.add(file, digest, other._packed[digest])

    def packed(self, digest: str) -> Packed | None:
        """The source of hash ``digest``, as kept."""
        return self._packed.get(digest)

    def digests(self) -> Iterator[tuple[str, Packed]]:
        """Each hash and its source, once."""
        return iter(self._packed.items())

    def __getitem__(self, key: tuple[str, str]) -> str:
        if key not in self._files:
            raise KeyError(key)
        packed = self._packed[key[1]]
        if packed.unread:
            try:
                return packed.text
            except PackedError:  # its file changed since the run: no text of it
                raise KeyError(key) from None
        return packed.text

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, key: object) -> bool:
        return key in self._files
