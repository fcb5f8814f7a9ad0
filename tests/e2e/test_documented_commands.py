"""Every ``archiver`` command form that README.md and docs/*.md show works as shown.

The forms are read from the documents themselves (inline code and code-block lines), so a
guide that shows an option the command does not take fails here. Each form is parsed by the
real parser with its placeholders filled in; the forms that need neither a browser nor a
drive are also run for real on a scratch library.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app import cli

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

INLINE = re.compile(r"`(?:\.venv/bin/)?(archiver(?: [^`]*)?)`")
BLOCK_LINE = re.compile(r"^\s*(?:\$ )?(?:\.venv/bin/)?(archiver(?: .*)?)$")

#: Commands that run for real on a scratch library: no browser, no drive, no network.
RUN_FOR_REAL = {"init", "info", "search", "index", "jobs", "migrate", "update", "policy", "mirror"}


def documented_forms() -> Iterator[tuple[str, str]]:
    """``(where, form)`` for every command form in the documents."""
    for doc in DOCUMENTS:
        in_block = False
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            where = f"{doc.relative_to(ROOT)}:{number}"
            if in_block:
                match = BLOCK_LINE.match(line)
                if match:
                    yield where, match.group(1)
            else:
                for match in INLINE.finditer(line):
                    yield where, match.group(1)


PLACEHOLDERS = {
    "PATH": "{scratch}/thing",
    "DEST": "{scratch}/moved",
    "FILE_OR_FOLDER": "{scratch}/thing",
    "URL": "https://example.org/",
    "QUERY": "climate",
    "SLUG": "climate",
    "T": "tag",
    "SECONDS": "5",
    "NAME": "blue",
    "TIME": "2024-03",
    "N": "8765",
    "ID": "7",
}


def to_argv(form: str, scratch: Path) -> list[str]:
    """The form as a user would type it, placeholders filled in and options kept."""
    form = form.replace("\\|", "|")
    form = form.split(" | ")[0]  # `capture URL... | -`: the first alternative
    form = re.sub(r"\[([^\]]*)\]", r"\1", form)  # optional parts are typed too
    words = shlex.split(form, comments=True)[1:]
    argv = []
    for word in words:
        if word in ("...", "<", "urls.txt"):
            continue
        bare = word.removesuffix("...")
        argv.append(PLACEHOLDERS.get(bare, bare).replace("{scratch}", str(scratch)))
    return argv


def _bare_mention(argv: list[str]) -> bool:
    """``archiver capture`` in running text names the command; it is not a form to type."""
    return len(argv) == 1


FORMS = sorted(set(documented_forms()))  # one order in every xdist worker


def test_the_documents_show_commands() -> None:
    assert len(FORMS) > 60
    commands = {to_argv(form, Path("/x"))[0] for _, form in FORMS if len(form.split()) > 1}
    assert {"init", "capture", "crawl", "search", "import", "export", "drives"} <= commands


@pytest.mark.parametrize(("where", "form"), FORMS, ids=[f"{w} {f}" for w, f in FORMS])
def test_documented_form_parses(where: str, form: str, tmp_path: Path) -> None:
    argv = to_argv(form, tmp_path)
    parser = cli.build_parser()
    if argv in (["--version"], ["--self-test"]):
        return  # both exit at once; test_cli.py and test_frozen.py run them
    if _bare_mention(argv):
        assert argv[0] in _command_names(parser), f"{where}: no command {argv[0]!r}"
        return
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: `{form}` does not parse (exit {exc.code})")
    if "--library" in argv:
        assert args.library == str(tmp_path / "thing")


def _command_names(parser: object) -> set[str]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def test_library_options_after_the_command(tmp_path: Path) -> None:
    """`archiver init --library PATH`, as the README shows it, makes the library there."""
    lib = tmp_path / "after"
    args = cli.build_parser().parse_args(["init", "--library", str(lib)])
    assert args.library == str(lib)
    before = cli.build_parser().parse_args(["--library", str(lib), "info"])
    assert before.library == str(lib)  # not reset by the command's own default
    nested = cli.build_parser().parse_args(["drives", "verify", "--library", str(lib)])
    assert nested.library == str(lib)
    assert cli.main(["init", "--library", str(lib)]) == 0
    assert (lib / "library.json").is_file()


@pytest.mark.parametrize(
    ("where", "form"),
    [(w, f) for w, f in FORMS if len(f.split()) > 1 and f.split()[1] in RUN_FOR_REAL],
    ids=[f"{w} {f}" for w, f in FORMS if len(f.split()) > 1 and f.split()[1] in RUN_FOR_REAL],
)
def test_documented_form_runs(
    where: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = tmp_path / "thing"
    assert cli.main(["--library", str(library), "init"]) == 0
    argv = to_argv(form, tmp_path)
    if argv[0] == "mirror" and "--dry-run" not in argv:
        argv.append("--dry-run")  # nothing to copy to: the plan is what can be run here
    if argv[0] == "migrate" and "--continuous" in argv:
        pytest.skip("runs until stopped")
    named_drives = not {"any", "inherit"} & set(argv)
    if argv[0] == "policy" and "--destinations" in argv and named_drives:
        code = cli.main(["--library", str(library), *argv])
        assert code == 2, f"{where}: unknown drives must be refused clearly"
        assert "blue" in capsys.readouterr().err
        return
    if "--resume-from" in argv:
        pytest.skip("needs a layout with that snapshot")
    if argv[0] in ("search", "policy") and "--collection" in argv:  # an unknown one is refused
        from archiver_app.library import Library

        with Library.open(library) as lib:
            lib.ensure_collection(argv[argv.index("--collection") + 1])
    code = cli.main(["--library", str(library), *argv])
    captured = capsys.readouterr()
    assert code == 0, f"{where}: `{form}` exited {code}: {captured.err}"
    assert "Traceback" not in captured.err
