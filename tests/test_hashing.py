""":func:`pathprof.hashing.source_hash`, the hash that names a version of a source
file: the first 32 hex digits of the SHA-256 of the source, text hashed as its UTF-8
bytes, so that the text of a file and its bytes name the same version. Expected
values are the FIPS 180-2 test vectors of SHA-256, cut to 32 digits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.hashing import source_hash

#: SHA-256 of b"" and of b"abc" (FIPS 180-2, appendix B.1), first 32 hex digits
EMPTY = "e3b0c44298fc1c149afbf4c8996fb924"
ABC = "ba7816bf8f01cfea414140de5dae2223"


@pytest.mark.parametrize("source", ["", b""], ids=["text", "bytes"])
def test_the_empty_source_hashes_to_sha256_of_nothing(source: str | bytes) -> None:
    assert source_hash(source) == EMPTY


@pytest.mark.parametrize("source", ["abc", b"abc"], ids=["text", "bytes"])
def test_a_known_source_hashes_to_the_first_32_digits_of_its_sha256(
        source: str | bytes) -> None:
    assert source_hash(source) == ABC


def test_text_is_hashed_as_its_utf8_bytes_not_another_encoding() -> None:
    text = "x = 'é'\n"
    assert source_hash(text) == source_hash(b"x = '\xc3\xa9'\n")
    assert source_hash(text) != source_hash(b"x = '\xe9'\n")  # latin-1's bytes


def test_sources_differing_in_one_byte_are_named_apart() -> None:
    assert source_hash("x = 1\n") != source_hash("x = 2\n")
    assert source_hash("x = 1\n") != source_hash("x = 1\r\n")


@settings(max_examples=50, deadline=None)
@given(st.text())
def test_every_hash_is_32_lowercase_hex_digits_and_text_equals_its_bytes(
        text: str) -> None:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: no UTF-8 bytes to compare with
        return
    digest = source_hash(text)
    assert len(digest) == 32
    assert set(digest) <= set("0123456789abcdef")
    assert digest == source_hash(data)
