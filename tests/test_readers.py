"""Readers files: strict addresses, Slack targets and subsystem names, refused at load with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.readers.file import load_readers

HEAD = "readers:\n  - id: a\n    name: x\n"

#: (the reader's remaining lines, the line named, what the message says)
HOSTILE = [
    # `email: |` keeps a trailing newline; `$` would match before it.
    ("    email: |\n      a@example.com\n", ":4:", "line break"),
    ("    email: \"a@example.com\\n\"\n", ":4:", "line break"),
    ("    email: \" a@example.com\"\n", ":4:", "spaces"),
    ("    email: \"a@example.com\\r\\nBcc: x@evil.example\"\n", ":4:", "line break"),
    ("    email: jörg@example.com\n", ":4:", "not ASCII"),
    ("    email: a@bücher.example\n", ":4:", "xn--"),
    ("    email: \"Jo <a@example.com>\"\n", ":4:", "single plain e-mail"),
    ("    email: a@example.com, b@example.com\n", ":4:", "single plain e-mail"),
    ("    slack: |\n      #chan\n", ":4:", "Slack channel"),
    ("    slack: \"#chan\\n\"\n", ":4:", "Slack channel"),
    ("    slack: \"C0123456 \"\n", ":4:", "Slack channel"),
    ("    email: a@example.com\n    subsystems: [\"../../../pwned\", src]\n", ":5:", "not a subsystem name"),
    ("    email: a@example.com\n    exclude: [\"docs/site\"]\n", ":5:", "not a subsystem name"),
    ("    email: a@example.com\n    subsystems: [\"Docs\"]\n", ":5:", "not a subsystem name"),
    ("    email: a@example.com\n    subsystems: [\"docs\\n\"]\n", ":5:", "not a subsystem name"),
    ("    email: a@example.com\n    subsystems: [\"-x\"]\n", ":5:", "not a subsystem name"),
]


@pytest.mark.parametrize(("lines", "line", "message"), HOSTILE)
def test_hostile_reader_is_refused_at_load_naming_file_and_line(tmp_path: Path, lines: str, line: str,
                                                                 message: str) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(HEAD + lines, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_readers(path)
    assert str(err.value).startswith(f"{path}{line}"), str(err.value)
    assert message in str(err.value)
    assert "\n" not in str(err.value)  # the bad value is shown quoted (repr), never as a raw line break


def test_an_editor_with_a_trailing_newline_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(HEAD + "    email: a@example.com\neditors:\n  - name: Lin\n    email: |\n      l@example.com\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r":7: .*editors\.0\.email.*line break"):
        load_readers(path)


@pytest.mark.parametrize("address", ["a@example.com", "first.last+digest@mail.example.org", "o'neil@x.co",
                                     "a@xn--bcher-kva.example"])
def test_plain_ascii_addresses_are_accepted(tmp_path: Path, address: str) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(HEAD + f"    email: \"{address}\"\n    slack: \"#vllm-digest\"\n", encoding="utf-8")
    assert load_readers(path).readers[0].email == address


def test_a_bad_readers_file_stops_the_run_before_anything_is_collected_or_written(tmp_path: Path) -> None:
    readers = tmp_path / "readers.yaml"
    readers.write_text(HEAD + "    email: ok@example.com\n  - id: b\n    name: y\n    email: |\n      b@example.com\n",
                       encoding="utf-8")
    out = tmp_path / "out"
    options = RunOptions(source="sample", readers=str(readers), out=str(out), state=str(tmp_path / "s.sqlite"))
    from flows.media import default_media

    with pytest.raises(ConfigError, match=rf"^{readers}:7: .*readers\.1\.email"):
        build_services(options, load_settings(state=options.state), default_media())
    assert not out.exists() and not (tmp_path / "s.sqlite").exists()


def _many(n: int, bad: int | None = None) -> str:
    lines = ["readers:"]
    for i in range(n):
        lines += [f"  - id: r-{i}", f"    name: Reader {i}", f"    email: r-{i}@example.com" if i != bad
                  else "    email: \"r@example.com\\nBcc: x@evil.example\"", "    subsystems: [core, docs]"]
    return "\n".join(lines) + "\n"


def test_a_bad_reader_is_named_by_file_line_field_and_id(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(_many(5, bad=3), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_readers(path)
    # reader 3 starts on line 14 (1 + 4 lines per reader); its email is its third line
    assert str(err.value).startswith(f"{path}:16: readers field 'readers.3.email' (reader 'r-3'): "), str(err.value)
    assert "\n" not in str(err.value)


def test_a_file_read_reader_by_reader_is_the_file_read_whole(tmp_path: Path) -> None:
    from prdigest.kernel.yamlfile import load_yaml_model
    from prdigest.readers.file import ReadersFile

    path = tmp_path / "readers.yaml"
    path.write_text("# anchors, merge keys and flow style across readers\nreaders:\n"
                    "  - &base {id: a, name: A, email: a@example.com, subsystems: [core], budget: 3}\n"
                    "  - <<: *base\n    id: b\n    slack: '#b'\n"
                    "  - {id: c, name: C, feishu: group-c, exclude: [docs], min_verdict: skim}\n"
                    "editors:\n  - {name: Lin, email: l@example.com}\n", encoding="utf-8")
    streamed = load_readers(path)
    assert streamed == load_yaml_model(path, ReadersFile, what="readers")
    assert [r.budget for r in streamed.readers] == [3, 3, 5] and streamed.editors[0].name == "Lin"


def test_reading_many_readers_never_holds_the_whole_files_yaml_nodes(tmp_path: Path) -> None:
    import gc
    import tracemalloc

    path = tmp_path / "readers.yaml"
    path.write_text(_many(2000), encoding="utf-8")
    gc.collect()
    tracemalloc.start()
    try:
        loaded = load_readers(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded.readers) == 2000
    # The whole file's node tree (a node, a mark and a resolved tag per scalar) came to 3.5 times the models.
    assert peak < 1.5 * held, (peak, held)


def test_readers_with_equal_filters_hold_one_copy_of_them_and_stay_apart_when_copied(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(_many(3), encoding="utf-8")
    a, b, c = load_readers(path).readers
    assert a.subsystems == b.subsystems == ("core", "docs") and a.subsystems is b.subsystems is c.subsystems
    assert a.model_fields_set is b.model_fields_set  # the same fields set: one set for all
    changed = a.model_copy(update={"budget": 2})
    stopped = b.without({"email"})
    assert changed.budget == 2 and a.budget == b.budget == 5 and "budget" not in b.model_fields_set
    assert stopped.email is None and b.email == "r-1@example.com" and a.email == "r-0@example.com"


def test_a_reader_read_from_the_file_holds_its_fields_in_a_dictionary_sharing_its_keys(tmp_path: Path) -> None:
    """Failed before: each reader's fields were in a dictionary of its own (eleven names: a table of 32 slots), ~460
    bytes of the ~730 a reader of this file held, 10,000 of them to the run's end; now the readers' dictionaries share
    one table of keys (~450 bytes a reader here). The readers read, compare, copy and dump as before."""
    import gc
    import tracemalloc

    from prdigest.kernel.yamlfile import load_yaml_model
    from prdigest.readers.file import Reader, ReadersFile

    path = tmp_path / "readers.yaml"
    path.write_text(_many(3000), encoding="utf-8")
    load_readers(path)  # the model's validators and the loader made once, before measuring
    gc.collect()
    tracemalloc.start()
    try:
        loaded = load_readers(path)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held / 3000 < 600, held / 3000
    whole = load_yaml_model(path, ReadersFile, what="readers")  # its own dictionaries
    assert loaded == whole and loaded.model_dump() == whole.model_dump()
    first = loaded.readers[0]
    built = Reader(id="r-0", name="Reader 0", email="r-0@example.com", subsystems=["core", "docs"])
    assert first == built and list(first.__dict__) == list(built.__dict__) and hash(first) == hash(built)
    copied = first.model_copy(update={"email": None, "slack": "#r-0"})
    assert (copied.email, copied.slack, first.email, first.slack) == (None, "#r-0", "r-0@example.com", None)
