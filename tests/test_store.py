"""The data file keeps what every run repeats once, compactly (schema 5): each
module's contract per file and source, each source per hash, compressed; reports
read it as they read what the run measured, copies and combines add no second copy,
a damaged blob is one clear error, and a file of schema 4 is refused."""

from __future__ import annotations

import re
import sqlite3
import textwrap
import zlib
from pathlib import Path

import pytest

from pathprof.contract import ModuleInfo
from pathprof.data import modules, store
from pathprof.data.modules import ModuleContract, Packed, Sources
from pathprof.data.profile import FunctionProfile, numbering_of
from pathprof.exceptions import DataError
from pathprof.graph import regenerate
from pathprof.hashing import source_hash
from pathprof.python.instrument import instrument_source

from .test_run import pathprof_cli

SHAPES = '''
    def classify(n):
        if n < 0:
            raise ValueError(n)
        kind = "even" if n % 2 == 0 else "odd"
        for i in range(n % 3):
            if i:
                kind += "!"
        return kind


    def never_called(x):
        while x:
            x -= 1
        return x


    def numbers(n):
        for i in range(n):
            yield i
'''

MAIN = '''
    import shapes


    def main():
        for n in range(-2, 9):
            try:
                shapes.classify(n)
            except ValueError:
                pass
        for number in shapes.numbers(10):
            if number == 3:
                break


    main()
'''


def _project(directory: Path) -> Path:
    (directory / "shapes.py").write_text(textwrap.dedent(SHAPES))
    (directory / "main.py").write_text(textwrap.dedent(MAIN))
    return directory


def _rows(path: Path, query: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def _count(path: Path, table: str) -> int:
    return _rows(path, f"SELECT count(*) FROM {table}")[0][0]  # type: ignore[return-value]


REPORTS = [("report",), ("report", "--format", "json"), ("coverage",), ("coverage", "-m"),
           ("coverage", "--format", "json"), ("lcov", "-o", "-"), ("xml", "-o", "-")]


def _reports(directory: Path, data_file: str) -> dict[str, str]:
    found = {}
    for command in REPORTS:
        result = pathprof_cli(directory, *command, "--data-file", data_file)
        found[" ".join(command)] = re.sub(r'timestamp="\d+"', "", result.stdout)
    html = directory / f"html-{data_file}"
    pathprof_cli(directory, "html", "--data-file", data_file, "-d", str(html))
    for page in sorted(html.rglob("*")):
        if page.is_file():
            found[f"html {page.relative_to(html)}"] = page.read_text(errors="replace")
    return found


def test_every_report_reads_a_copied_and_a_combined_file_as_the_run_it_holds(
        tmp_path: Path) -> None:
    """A file written again from what was read (its contracts and sources copied
    compressed, as combine copies them), and one combined into an empty target,
    give every report exactly what the run's own file gives."""
    _project(tmp_path)
    pathprof_cli(tmp_path, "run", "--data-file", "run.pathprof", "main.py")
    read = store.read(str(tmp_path / "run.pathprof"))
    store.write(str(tmp_path / "copy.pathprof"), read.runs, read.functions, read.sources)
    (tmp_path / "part.pathprof").write_bytes((tmp_path / "run.pathprof").read_bytes())
    pathprof_cli(tmp_path, "combine", "--data-file", "combined.pathprof", "part.pathprof")
    expected = _reports(tmp_path, "run.pathprof")
    assert _reports(tmp_path, "copy.pathprof") == expected
    assert _reports(tmp_path, "combined.pathprof") == expected
    assert "classify" in expected["report"]
    assert "never_called" in expected["coverage -m"]


def test_reports_show_the_source_the_run_measured_after_it_changed(tmp_path: Path) -> None:
    _project(tmp_path)
    pathprof_cli(tmp_path, "run", "main.py")
    before = pathprof_cli(tmp_path, "report").stdout
    (tmp_path / "shapes.py").write_text("# rewritten\n" + textwrap.dedent(SHAPES)
                                        .replace("kind", "sort"))
    assert pathprof_cli(tmp_path, "report").stdout == before
    assert 'kind = "even"' in before


def test_what_a_run_repeats_is_kept_once_and_compressed(tmp_path: Path) -> None:
    """One module row per measured file and one source row per hash, zlib-compressed
    and checked by CRC-32; a function row for every measured function, run or not;
    call stats only of the functions some call of which raised."""
    _project(tmp_path)
    pathprof_cli(tmp_path, "run", "main.py")
    data = tmp_path / ".pathprof"
    files = _rows(data, "SELECT file, source_hash, contract, crc FROM module")
    assert sorted(Path(str(row[0])).name for row in files) == ["main.py", "shapes.py"]
    for _, digest, contract, crc in files:
        assert isinstance(contract, bytes)
        assert zlib.crc32(contract) == crc
        info = ModuleInfo.decode(zlib.decompress(contract))
        assert info.source_hash == digest
    sources = _rows(data, "SELECT source_hash, text, crc FROM source")
    assert {row[0] for row in sources} == {row[1] for row in files}
    shapes = next(row for row in files if str(row[0]).endswith("shapes.py"))
    text = next(row[1] for row in sources if row[0] == shapes[1])
    assert zlib.decompress(text).decode() == textwrap.dedent(SHAPES)  # type: ignore[arg-type]
    names = {row[0] for row in _rows(data, "SELECT qualname FROM function")}
    assert {"classify", "never_called", "numbers"} <= names
    raised = _rows(data, "SELECT qualname, raised FROM call_stats JOIN function "
                         "ON function.id = function_id")
    assert sorted(raised) == [("classify", 2), ("numbers", 1)]


def test_combining_files_of_the_same_code_keeps_each_contract_and_source_once(
        tmp_path: Path) -> None:
    _project(tmp_path)
    for name in ("one", "two", "three"):
        pathprof_cli(tmp_path, "run", "--data-file", f".pathprof.{name}", "main.py")
    one = tmp_path / ".pathprof.one"
    modules_one, sources_one = _count(one, "module"), _count(one, "source")
    functions_one = _count(one, "function")
    blobs = _rows(one, "SELECT sum(length(contract)) FROM module")[0][0]
    calls = {fn.qualname: fn.total for fn in store.read(str(one)).functions}
    pathprof_cli(tmp_path, "combine")
    data = tmp_path / ".pathprof"
    assert not one.exists()
    assert (_count(data, "module"), _count(data, "source")) == (modules_one, sources_one)
    assert _rows(data, "SELECT sum(length(contract)) FROM module")[0][0] == blobs
    assert _count(data, "function") == functions_one
    combined = {fn.qualname: fn.total for fn in store.read(str(data)).functions}
    assert combined == {name: 3 * total for name, total in calls.items()}
    assert len(store.read(str(data)).runs) == 3
    # --append of the same code adds no contract, no source, no function row
    pathprof_cli(tmp_path, "run", "--append", "main.py")
    assert (_count(data, "module"), _count(data, "source"),
            _count(data, "function")) == (modules_one, sources_one, functions_one)


def test_a_changed_source_is_kept_beside_the_one_measured_before(tmp_path: Path) -> None:
    _project(tmp_path)
    pathprof_cli(tmp_path, "run", "main.py")
    (tmp_path / "shapes.py").write_text(textwrap.dedent(SHAPES) + "\n\ndef more():\n    "
                                        "return 1\n")
    pathprof_cli(tmp_path, "run", "--append", "main.py")
    data = tmp_path / ".pathprof"
    shapes = _rows(data, "SELECT source_hash FROM module WHERE file LIKE '%shapes.py'")
    assert len(shapes) == 2
    assert _count(data, "source") == 3
    conflicts = store.source_conflicts([store.read(str(data))])
    assert ("classify", 2) in {(qualname, n) for _, qualname, n in conflicts}


def test_a_report_of_some_files_decodes_only_their_contracts(tmp_path: Path) -> None:
    """The contract of a file a report leaves out is not decoded: a damaged one
    stops only the reports that read it (every one names it)."""
    _project(tmp_path)
    pathprof_cli(tmp_path, "run", "main.py")
    not_a_module = zlib.compress(b"[]")
    db = sqlite3.connect(tmp_path / ".pathprof")
    db.execute("UPDATE module SET contract = ?, crc = ? WHERE file LIKE '%main.py'",
               (not_a_module, zlib.crc32(not_a_module)))
    db.commit()
    db.close()
    only = pathprof_cli(tmp_path, "report", "--include", "*/shapes.py")
    assert "classify" in only.stdout
    every = pathprof_cli(tmp_path, "report", check=False)
    assert every.returncode == 1
    assert every.stderr.startswith("pathprof: .pathprof is damaged: module row ")
    assert "main.py): its contract is not a module's metadata" in every.stderr


def _instrumented(directory: Path, source: str, **options: object
                  ) -> tuple[str, str, ModuleInfo]:
    path = directory / "subject.py"
    path.write_text(source)
    text = path.read_text()
    return str(path), text, instrument_source(text, str(path), **options).metadata  # type: ignore[arg-type]


def _profiles(file: str, info: ModuleInfo, contract: ModuleContract | None = None
              ) -> list[FunctionProfile]:
    found = []
    for position, meta in enumerate(info.functions):
        fn = FunctionProfile(file, meta.qualname, meta.code_line, info.source_hash, meta,
                             module=contract, position=position)
        fn.counts = {0: position + 1}
        found.append(fn)
    return found


def _run_info() -> store.RunInfo:
    return store.RunInfo(0.0, ["x"], "3.11", "path", None, 1, "host")


def test_a_run_that_replaces_a_file_of_the_same_code_compresses_nothing_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file, text, info = _instrumented(tmp_path, textwrap.dedent(SHAPES))
    path = str(tmp_path / "data.pathprof")

    def run() -> tuple[list[FunctionProfile], dict[tuple[str, str], str]]:
        contract = ModuleContract(file, info.source_hash, Packed(info.encode()), info)
        return _profiles(file, info, contract), {(file, info.source_hash): text}

    store.write(path, _run_info(), *run())
    compressed: list[int] = []
    compress = zlib.compress

    def counting(data: bytes, level: int = -1) -> bytes:
        compressed.append(len(data))
        return compress(data, level)

    monkeypatch.setattr(modules.zlib, "compress", counting)
    store.write(path, _run_info(), *run())
    assert compressed == []
    read = store.read(path)
    assert [fn.meta for fn in read.functions] == list(info.functions)
    assert read.sources[(file, info.source_hash)] == text
    # another version of the source: its contract and text are compressed, once each
    _, changed, other = _instrumented(tmp_path, textwrap.dedent(SHAPES)
                                      + "\n\ndef more():\n    return 1\n")
    contract = ModuleContract(file, other.source_hash, Packed(other.encode()), other)
    store.write(path, _run_info(), _profiles(file, other, contract),
                {(file, other.source_hash): changed})
    assert len(compressed) == 2


def test_a_source_the_file_holds_is_never_read_and_a_changed_one_is_left_out(
        tmp_path: Path) -> None:
    """A run's sources come unread (:meth:`Profiler.collect`): the file a run
    replaces gives the text of a source hash it holds, so that file is not read
    again; one it lacks is read as it is written, and left out if it changed in
    between (its reports then say so, as for a file changed during the run)."""
    file, text, info = _instrumented(tmp_path, textwrap.dedent(SHAPES))
    path = str(tmp_path / "data.pathprof")
    reads: list[str] = []

    def run(loaded: str | None) -> tuple[list[FunctionProfile], Sources]:
        def load() -> str | None:
            reads.append(file)
            return loaded
        contract = ModuleContract(file, info.source_hash, Packed(info.encode()), info)
        sources = Sources()
        sources.add(file, info.source_hash, Packed(load=load))
        return _profiles(file, info, contract), sources

    store.write(path, _run_info(), *run(None))  # changed before it was written
    assert _count(Path(path), "source") == 0
    assert [fn.total for fn in store.read(path).functions] == [1, 2, 3]
    store.write(path, _run_info(), *run(text))
    assert reads == [file, file]
    assert store.read(path).sources[(file, info.source_hash)] == text
    store.write(path, _run_info(), *run(None))  # replaced: the file held it
    assert reads == [file, file]
    assert store.read(path).sources[(file, info.source_hash)] == text
    unread = Sources()
    unread.add(file, info.source_hash, Packed(load=lambda: None))
    assert (file, info.source_hash) in unread
    with pytest.raises(KeyError):
        unread[(file, info.source_hash)]


def test_profiles_of_one_source_under_other_contracts_share_its_row(tmp_path: Path) -> None:
    """Copies of a parallel run measure one source under contracts that differ (which
    copy profiles which function): their functions go into the contract the file
    holds, each at the position of its outline; profiles made without a contract
    get one made of their metadata."""
    file, text, info = _instrumented(tmp_path, textwrap.dedent(SHAPES))
    _, _, copy = _instrumented(tmp_path, textwrap.dedent(SHAPES), calls_only={0})
    assert copy.encode() != info.encode()
    first = ModuleContract(file, info.source_hash, Packed(info.encode()), info)
    second = ModuleContract(file, info.source_hash, Packed(copy.encode()), copy)
    profiles = _profiles(file, info, first)[:1] + _profiles(file, copy, second)[1:]
    path = tmp_path / "data.pathprof"
    store.write(str(path), _run_info(), profiles, {(file, info.source_hash): text})
    assert _count(path, "module") == 1
    assert _rows(path, "SELECT position, qualname FROM function ORDER BY position") == [
        (i, meta.qualname) for i, meta in enumerate(info.functions)]
    read = store.read(str(path))
    assert [fn.meta.outline for fn in read.functions] == [m.outline for m in info.functions]
    assert [fn.total for fn in read.functions] == [1, 2, 3]
    # made by hand, with no contract: the store makes one of their metadata
    loose = tmp_path / "loose.pathprof"
    store.write(str(loose), _run_info(), _profiles(file, info)[1:], {})
    assert _count(loose, "module") == 1
    assert _count(loose, "source") == 0
    again = store.read(str(loose))
    assert [(fn.qualname, fn.total) for fn in again.functions] == [
        (meta.qualname, i + 2) for i, meta in enumerate(info.functions[1:])]
    assert again.sources == {}


def test_sources_keep_one_text_per_hash() -> None:
    sources = Sources({("a.py", "h1"): "x = 1\n", ("copy/a.py", "h1"): "x = 1\n",
                       ("b.py", "h2"): "y = 2\n"})
    assert dict(sources) == {("a.py", "h1"): "x = 1\n", ("copy/a.py", "h1"): "x = 1\n",
                             ("b.py", "h2"): "y = 2\n"}
    assert len(list(sources.digests())) == 2
    packed = Packed(data=zlib.compress("é\n".encode()))
    assert packed.text == "é\n"
    assert Packed("é\n").same(packed)
    assert not Packed("e\n").same(packed)
    with pytest.raises(modules.PackedError):
        Packed(data=b"not zlib").text  # noqa: B018


#: The tables of schema 4, as pathprof 0.1 wrote them (a function's contract in
#: ``function.cfg``, the source text in ``source``).
SCHEMA_4 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE run (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, argv TEXT NOT NULL, python TEXT NOT NULL,
    mode TEXT NOT NULL, metric TEXT, pid INTEGER NOT NULL, hostname TEXT NOT NULL);
CREATE TABLE function (
    id INTEGER PRIMARY KEY, file TEXT NOT NULL, qualname TEXT NOT NULL,
    first_line INTEGER NOT NULL, source_hash TEXT NOT NULL, cfg TEXT NOT NULL,
    UNIQUE (file, qualname, first_line, source_hash));
CREATE TABLE source (
    file TEXT NOT NULL, source_hash TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (file, source_hash));
CREATE TABLE path (
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')), path TEXT NOT NULL,
    count INTEGER NOT NULL, time_ns INTEGER, PRIMARY KEY (function_id, kind, path));
CREATE TABLE edge (
    function_id INTEGER NOT NULL REFERENCES function (id), edge INTEGER NOT NULL,
    count INTEGER NOT NULL, PRIMARY KEY (function_id, edge));
CREATE TABLE call_stats (
    function_id INTEGER PRIMARY KEY REFERENCES function (id),
    raised INTEGER NOT NULL, unattributed INTEGER NOT NULL);
CREATE TABLE context (
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')), path TEXT NOT NULL,
    context TEXT NOT NULL, PRIMARY KEY (function_id, kind, path, context));
"""


def _schema_4_file(directory: Path, name: str = ".pathprof") -> Path:
    """A data file of schema 4 holding one run of ``shapes.py``'s ``classify``."""
    source = textwrap.dedent(SHAPES)
    file = str(directory / "shapes.py")
    meta = instrument_source(source, file).metadata.functions[0]
    path = directory / name
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_4)
    db.executemany("INSERT INTO meta VALUES (?, ?)",
                   [("schema_version", "4"), ("pathprof_version", "0.1.0")])
    db.execute("INSERT INTO run VALUES (1, 0.0, '[\"main.py\"]', '3.11.7', 'path', NULL, 1, "
               "'host')")
    db.execute("INSERT INTO function VALUES (1, ?, ?, ?, ?, ?)",
               (file, meta.qualname, meta.code_line, source_hash(source),
                '[8,["classify"]]'))
    db.execute("INSERT INTO source VALUES (?, ?, ?)", (file, source_hash(source), source))
    db.execute("INSERT INTO path VALUES (1, 'path', '0', 5, NULL)")
    db.commit()
    db.close()
    return path


def test_a_schema_4_file_is_refused_with_one_line_and_left_untouched(tmp_path: Path) -> None:
    _project(tmp_path)
    data = _schema_4_file(tmp_path)
    before = data.read_bytes()
    refusal = "has data schema 4; this pathprof reads schema 5; it was left untouched"
    with pytest.raises(DataError, match=refusal):
        store.read(str(data))
    with pytest.raises(DataError, match=refusal):
        store.write(str(data), _run_info(), [], {}, append=True)
    for command in (("report",), ("coverage",), ("html",), ("lcov",)):
        result = pathprof_cli(tmp_path, *command, check=False)
        assert result.returncode == 1
        assert result.stderr == f"pathprof: .pathprof {refusal}\n"
    appended = pathprof_cli(tmp_path, "run", "--append", "main.py", check=False)
    assert appended.returncode == 0
    assert f"{refusal}; this run's data was saved to " in appended.stderr
    other = _schema_4_file(tmp_path, ".pathprof.old")
    combined = pathprof_cli(tmp_path, "combine", "--data-file", "new.pathprof",
                            ".pathprof.old", check=False)
    assert combined.returncode == 1
    assert refusal in combined.stderr
    assert other.exists()
    assert not (tmp_path / "new.pathprof").exists()
    assert data.read_bytes() == before
    # a new run, not added to it, replaces it (as it would a file of this schema)
    pathprof_cli(tmp_path, "run", "main.py")
    assert {fn.qualname for fn in store.read(str(data)).functions} >= {"classify"}


def test_combine_refuses_a_file_whose_blob_is_damaged_and_changes_nothing(
        tmp_path: Path) -> None:
    _project(tmp_path)
    for name in ("a", "b"):
        pathprof_cli(tmp_path, "run", "--data-file", f".pathprof.{name}", "main.py")
    damaged = tmp_path / ".pathprof.b"
    db = sqlite3.connect(damaged)
    db.execute("UPDATE source SET text = zeroblob(16) WHERE rowid = 1")
    db.commit()
    db.close()
    before = damaged.read_bytes()
    result = pathprof_cli(tmp_path, "combine", check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert ".pathprof.b is damaged: source row '" in result.stderr
    assert "its text does not match its CRC-32" in result.stderr
    assert (tmp_path / ".pathprof.a").exists()
    assert damaged.read_bytes() == before
    assert not (tmp_path / ".pathprof").exists()


def test_counts_are_numbers_in_memory_and_text_only_in_the_file(tmp_path: Path) -> None:
    """A profile's paths are Ball-Larus numbers and (block, prefix value) pairs from the
    runtime to the reports; the ``path`` column holds them as text (``"3"``,
    ``"2:1"``) and reading gives the numbers back, contexts keyed the same way."""
    file, text, info = _instrumented(tmp_path, textwrap.dedent(SHAPES))
    (fn, *_rest) = _profiles(file, info)
    assert fn.qualname == "classify"
    assert fn.meta.num_paths > 3
    block = regenerate(numbering_of(fn.meta), 0).blocks[1]  # (path 0's prefixes: value 0)
    fn.counts, fn.cuts, fn.times = {3: 5, 0: 1}, {(block, 0): 2}, {3: 700}
    fn.contexts = {3: {"test_a"}, (block, 0): {"test_b", "test_a"}}
    path = tmp_path / "data.pathprof"
    store.write(str(path), _run_info(), [fn], {(file, info.source_hash): text})
    assert sorted(_rows(path, "SELECT kind, path, count, time_ns FROM path")) == [
        ("cut", f"{block}:0", 2, None), ("path", "0", 1, None), ("path", "3", 5, 700)]
    assert sorted(_rows(path, "SELECT kind, path, context FROM context")) == [
        ("cut", f"{block}:0", "test_a"), ("cut", f"{block}:0", "test_b"),
        ("path", "3", "test_a")]
    (back,) = [f for f in store.read(str(path)).functions if f.qualname == "classify"]
    assert (back.counts, back.cuts, back.times) == (fn.counts, fn.cuts, fn.times)
    assert back.contexts == fn.contexts
    assert [p.id for p in back.paths] == [3, (block, 0), 0]  # hottest first
    assert [p.key for p in back.paths] == ["3", f"cut:{block}:0", "0"]
