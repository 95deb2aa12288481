""":mod:`pathprof.data.modules`, what a data file keeps once per version of a measured
file: :class:`Packed` texts (zlib of UTF-8, made from the text, the compressed bytes
or a ``load`` function, the other form made when first asked for, and never inflated
past :func:`inflation_bound` of their size when read back), :class:`ModuleContract`
(a module's functions decoded from one packed text, each checked as data read from a
file), and :class:`Sources` (source texts by ``(file, source hash)``, one per hash).
Compressed input that is damaged, truncated, trailed by junk, not UTF-8 or a
decompression bomb is a :class:`PackedError`; a contract that breaks its invariants
is a :class:`~pathprof.contract.ContractError`."""

from __future__ import annotations

import json
import zlib

import pytest

from pathprof.contract import ContractError, ModuleInfo
from pathprof.data.modules import (
    MAX_RATIO,
    MAX_TEXT,
    MIN_BOUND,
    ModuleContract,
    Packed,
    PackedError,
    Sources,
    inflation_bound,
)
from pathprof.python.instrument import instrument_source

SOURCE = '''\
def first(n):
    if n:
        return 1
    return 2


def second(items):
    for item in items:
        pass
'''


def _info() -> ModuleInfo:
    return instrument_source(SOURCE, "/nowhere/m.py", module_key="m").metadata


# -- inflation_bound ---------------------------------------------------------------------

def test_the_bounds_are_those_documented() -> None:
    assert (MAX_RATIO, MIN_BOUND, MAX_TEXT) == (64, 1 << 20, 64 << 20)


@pytest.mark.parametrize(("compressed", "bound"), [
    (0, 1 << 20),  # at least a mebibyte
    (100, 1 << 20),
    (16_384, 1 << 20),  # 64 * 16 KiB is exactly the floor
    (16_385, 64 * 16_385),  # past it: 64 times the size
    (1 << 20, 64 << 20),  # 64 * 1 MiB is exactly the ceiling
    (10 << 20, 64 << 20),  # never past it
])
def test_a_text_may_inflate_64_times_between_a_floor_and_a_ceiling(
        compressed: int, bound: int) -> None:
    assert inflation_bound(compressed) == bound


# -- Packed ------------------------------------------------------------------------------

def test_a_packed_text_needs_a_text_its_data_or_a_way_to_load_it() -> None:
    with pytest.raises(TypeError, match="needs a text"):
        Packed()


def test_a_text_is_compressed_as_zlib_of_its_utf8_bytes() -> None:
    text = "x = 'é'\n"
    packed = Packed(text)
    assert zlib.decompress(packed.data) == b"x = '\xc3\xa9'\n"
    assert packed.text == text


def test_compressed_data_is_decompressed_when_the_text_is_asked_for() -> None:
    packed = Packed(data=zlib.compress("ünïcode\n".encode()))
    assert packed.text == "ünïcode\n"
    assert not packed.unread


def test_the_crc_is_crc32_of_the_compressed_bytes() -> None:
    data = zlib.compress(b"some text")
    assert Packed(data=data).crc == zlib.crc32(data)


def test_the_checksum_is_adler32_of_the_text_in_either_form() -> None:
    # zlib ends its stream with the Adler-32 of what it compressed
    expected = zlib.adler32(b"abc")
    assert Packed("abc").checksum() == expected
    assert Packed(data=zlib.compress(b"abc", 9)).checksum() == expected


def test_a_loaded_text_is_loaded_once_when_first_asked_for() -> None:
    calls: list[int] = []

    def load() -> str:
        calls.append(1)
        return "loaded\n"

    packed = Packed(load=load)
    assert packed.unread
    assert calls == []
    assert packed.text == "loaded\n"
    assert packed.text == "loaded\n"
    assert zlib.decompress(packed.data) == b"loaded\n"
    assert calls == [1]
    assert not packed.unread


def test_a_loaded_text_compressed_first_is_not_loaded_again_for_its_text() -> None:
    calls: list[int] = []

    def load() -> str:
        calls.append(1)
        return "once\n"

    packed = Packed(load=load)
    assert zlib.decompress(packed.data) == b"once\n"
    assert packed.text == "once\n"
    assert calls == [1]


@pytest.mark.parametrize("ask", ["text", "data"])
def test_a_load_that_finds_no_text_is_a_packed_error(ask: str) -> None:
    packed = Packed(load=lambda: None)
    with pytest.raises(PackedError, match="no longer at hand"):
        getattr(packed, ask)


def test_adopting_takes_the_others_data_and_never_loads() -> None:
    calls: list[int] = []

    def load() -> str:  # pragma: no cover - must not be called
        calls.append(1)
        return "other text"

    held = Packed(data=zlib.compress(b"the same"))
    packed = Packed(load=load)
    packed.adopt(held)
    assert not packed.unread
    assert packed.data is held.data
    assert packed.text == "the same"
    assert calls == []


def test_adopting_changes_nothing_of_a_text_already_read_or_from_one_not_compressed(
        ) -> None:
    mine = Packed("mine")
    mine.adopt(Packed(data=zlib.compress(b"theirs")))
    assert mine.text == "mine"
    assert zlib.decompress(mine.data) == b"mine"
    unread = Packed(load=lambda: "loaded")
    unread.adopt(Packed("uncompressed"))  # nothing compressed to take
    assert unread.unread
    assert unread.text == "loaded"


def test_forgetting_the_text_keeps_it_to_be_made_again() -> None:
    packed = Packed("kept\n")
    packed.data  # noqa: B018 - compressed now
    packed.forget_text()
    assert packed.text == "kept\n"
    alone = Packed("no data yet")
    alone.forget_text()  # nothing compressed: the text is all there is, and stays
    assert alone.text == "no data yet"


def test_same_compares_texts_or_checksums_and_shares_compressed_data() -> None:
    compressed = Packed(data=zlib.compress(b"text\n"))
    plain = Packed("text\n")
    assert plain.same(compressed)
    assert plain.data is compressed.data  # nothing compressed again
    assert Packed("text\n").same(Packed("text\n"))
    assert not Packed("text\n").same(Packed("other\n"))
    assert not Packed("text\n").same(Packed(data=zlib.compress(b"other\n")))
    assert compressed.same(compressed)


def test_a_text_compressed_here_is_readable_unless_it_inflates_past_the_bound() -> None:
    assert Packed("x = 1\n" * 1000).readable
    # 2 MiB of blanks compress to a few KB: past 64 times that, and past 1 MiB
    blanks = Packed(" " * (2 << 20))
    assert len(blanks.data) < 32_768
    assert not blanks.readable
    # read back from a file, its size is unknown here (reading checks it)
    assert Packed(data=blanks.data).readable


def test_a_text_may_inflate_exactly_to_the_bound() -> None:
    data = zlib.compress(b" " * MIN_BOUND, 9)
    assert inflation_bound(len(data)) == MIN_BOUND  # a few KB: the floor
    assert Packed(data=data).text == " " * MIN_BOUND


@pytest.mark.parametrize(("data", "message"), [
    (zlib.compress(b" " * (MIN_BOUND + 1), 9), "it inflates to more than 1,048,576 bytes"),
    (zlib.compress(b"abc")[:-1], "incomplete or truncated stream"),
    (b"", "incomplete or truncated stream"),
    (zlib.compress(b"abc") + b"junk", "4 bytes after the end of the compressed text"),
    (zlib.compress(b"\xff\xfe text"), "can't decode byte 0xff"),
    (b"not zlib at all", "incorrect header check"),
], ids=["bomb", "truncated", "empty", "trailing", "not-utf8", "not-zlib"])
def test_compressed_data_that_holds_no_text_is_a_packed_error(data: bytes,
                                                              message: str) -> None:
    with pytest.raises(PackedError, match=message):
        Packed(data=data).text  # noqa: B018


def test_data_that_is_not_bytes_is_a_packed_error() -> None:
    with pytest.raises(PackedError, match="str, not compressed text"):
        Packed(data="text").text  # type: ignore[arg-type]  # noqa: B018


def test_a_packed_error_is_a_value_error() -> None:
    assert issubclass(PackedError, ValueError)


# -- ModuleContract ----------------------------------------------------------------------

def test_a_contract_decodes_its_functions_from_its_text() -> None:
    info = _info()
    contract = ModuleContract("/nowhere/m.py", info.source_hash, Packed(info.encode()))
    decoded = contract.info()
    assert [f.qualname for f in decoded.functions] == ["first", "second"]
    assert contract.function(0) == info.functions[0]
    assert contract.function(1) == info.functions[1]
    assert contract.info() is decoded  # decoded once


def test_outlines_name_each_function_its_line_paths_blocks_and_edges() -> None:
    info = _info()
    contract = ModuleContract("/nowhere/m.py", info.source_hash, Packed(info.encode()))
    # first: entry, exit, the test and two returns, 5 edges, 2 paths; second: entry,
    # exit, ``items``, the loop's step and ``pass``, 5 edges (one back), 4 paths (from
    # entry or the loop's header, through the body or out)
    assert contract.outlines() == [("first", 1, 2, 5, 5), ("second", 7, 4, 5, 5)]


def test_the_digest_is_the_sha256_of_the_compressed_text() -> None:
    import hashlib

    data = zlib.compress(b"[9]")
    contract = ModuleContract("f.py", "h", Packed(data=data))
    assert contract.digest == hashlib.sha256(data).hexdigest()[:32]
    assert len(contract.digest) == 32


def test_a_contract_of_functions_holds_them_in_their_order() -> None:
    info = _info()
    second, first = info.functions[1], info.functions[0]
    contract = ModuleContract.of_functions("/f.py", "abc", [second, first])
    assert (contract.file, contract.source_hash) == ("/f.py", "abc")
    assert contract.holds(second, 0)
    assert contract.holds(first, 1)
    assert not contract.holds(first, 0)
    assert not contract.holds(first, 2)
    again = ModuleInfo.decode(contract.packed.text)
    assert [f.qualname for f in again.functions] == ["second", "first"]
    assert (again.file, again.source_hash) == ("/f.py", "abc")


def test_holds_is_true_only_of_the_very_object_decoded() -> None:
    info = _info()
    contract = ModuleContract("/nowhere/m.py", info.source_hash, Packed(info.encode()))
    assert not contract.holds(info.functions[0], 0)  # nothing decoded yet
    meta = contract.function(0)
    assert contract.holds(meta, 0)
    assert not contract.holds(info.functions[0], 0)  # equal, not the same object


@pytest.mark.parametrize("position", [-1, 2, "0", None])
def test_a_position_the_contract_does_not_have_is_a_contract_error(position: object
                                                                  ) -> None:
    info = _info()
    contract = ModuleContract("/nowhere/m.py", info.source_hash, Packed(info.encode()))
    with pytest.raises(ContractError, match=f"no function at position {position!r} of 2"):
        contract.function(position)  # type: ignore[arg-type]


def _edited(field: int, value: object) -> ModuleContract:
    """The contract of :data:`SOURCE` with field ``field`` of its first function's row
    replaced by ``value`` (as a hand editing the data file would)."""
    info = _info()
    module = json.loads(info.encode())
    row = json.loads(module[7][0])
    row[field] = value
    module[7][0] = json.dumps(row)
    return ModuleContract("/nowhere/m.py", info.source_hash, Packed(json.dumps(module)))


def test_a_function_that_breaks_the_graphs_invariants_is_a_contract_error() -> None:
    contract = _edited(14, [0])  # one query increment for five blocks
    with pytest.raises(ContractError, match="first: 1 query increments for 5 blocks"):
        contract.function(0)
    assert contract.function(1).qualname == "second"  # its other functions are sound


def test_a_function_whose_fields_are_out_of_range_is_a_contract_error() -> None:
    contract = _edited(3, 0)  # code line 0
    with pytest.raises(ContractError, match="first: lines 0, 1, 4 are not a function's"):
        contract.function(0)


@pytest.mark.parametrize(("packed", "error"), [
    (Packed("not json"), ContractError),
    (Packed("[9, 1]"), ContractError),
    (Packed(data=b"\x78\x9cjunk"), PackedError),
], ids=["not-json", "not-a-module", "damaged"])
def test_a_contract_that_is_not_a_modules_is_refused(packed: Packed,
                                                     error: type[Exception]) -> None:
    with pytest.raises(error):
        ModuleContract("f.py", "h", packed).info()


# -- Sources -----------------------------------------------------------------------------

def test_sources_map_each_file_and_hash_to_its_text() -> None:
    sources = Sources({("a.py", "h1"): "a\n", ("b.py", "h2"): "b\n"})
    assert len(sources) == 2
    assert sources[("a.py", "h1")] == "a\n"
    assert ("b.py", "h2") in sources
    assert ("a.py", "h2") not in sources  # the hash is held, not for this file
    with pytest.raises(KeyError):
        sources[("a.py", "h2")]
    assert sorted(sources) == [("a.py", "h1"), ("b.py", "h2")]


def test_the_first_text_of_a_hash_is_the_one_kept() -> None:
    sources = Sources()
    first, second = Packed("one\n"), Packed("two\n")
    sources.add("a.py", "h", first)
    sources.add("copy/a.py", "h", second)
    assert sources.packed("h") is first
    assert sources[("copy/a.py", "h")] == "one\n"
    assert [digest for digest, _ in sources.digests()] == ["h"]
    assert len(sources) == 2
    assert sources.packed("other") is None


def test_empty_sources_hold_nothing() -> None:
    assert len(Sources()) == 0
    assert list(Sources().digests()) == []
    assert dict(Sources({})) == {}


def test_updating_shares_the_others_packed_texts_without_decompressing() -> None:
    other = Sources()
    packed = Packed(data=zlib.compress(b"kept compressed\n"))
    other.add("a.py", "h", packed)
    sources = Sources({("b.py", "g"): "b\n"})
    sources.update(other)
    assert sources.packed("h") is packed
    assert dict(sources) == {("b.py", "g"): "b\n", ("a.py", "h"): "kept compressed\n"}
    assert Sources(other).packed("h") is packed  # made of Sources: the same


def test_a_source_whose_text_is_no_longer_at_hand_is_missing() -> None:
    sources = Sources()
    sources.add("a.py", "h", Packed(load=lambda: None))
    assert ("a.py", "h") in sources
    with pytest.raises(KeyError):
        sources[("a.py", "h")]
    assert sources.get(("a.py", "h")) is None

