"""HTTP messages as archived: a file's name."""

from __future__ import annotations

from archiver_app.warc.httpmsg import file_name


def test_a_files_name_is_the_one_its_content_disposition_gives() -> None:
    dl = "http://e.test/dl?id=5"
    assert file_name(dl, 'attachment; filename="quarterly report 2026.csv"') == (
        "quarterly report 2026.csv"
    )
    assert file_name(dl, "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf") == "résumé.pdf"
    assert file_name(dl, 'attachment; filename="..\\\\..\\\\evil.bat"') == "evil.bat"  # no path
    assert file_name("http://e.test/a/my%20set.zip", "attachment") == "my set.zip"
    assert file_name("http://e.test/a/report.csv") == "report.csv"
    assert file_name("http://e.test/") == "http://e.test/"
