"""Formatted references as the style guides write them: US punctuation inside quotes,
a capital at the start of a title and after its colon, MLA's title first without an author."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from archiver_app.cite import Reference, formatted
from archiver_app.cite.names import parse_name

WHEN = datetime(2026, 3, 2, 9, 30, 15, tzinfo=UTC)
URL = "http://127.0.0.1:8765/river"
COPY = "urn:archiver:lib:uid"


def _ref(title: str, *, author: str | None = "Jane Port", site: str = "Riverton Council",
         issued: tuple[int, ...] | None = (2026, 3, 14)) -> Reference:  # fmt: skip
    return Reference(
        key="k",
        title=title,
        original_url=URL,
        site=site,
        captured_at=WHEN,
        archive_id=COPY,
        version_url=COPY,
        uid="uid",
        authors=(parse_name(author),) if author else (),
        issued=issued,
    )


def test_us_styles_set_the_period_and_comma_inside_the_closing_quote() -> None:
    r = _ref("Council notice on river levels")
    assert formatted([r], "chicago") == (
        "Port, Jane. 2026. “Council Notice on River Levels.” Riverton Council, March 14. "
        f"{COPY}. Archiver. Accessed March 2, 2026. {URL}.\n"
    )
    assert formatted([r], "mla") == (
        "Port, Jane. “Council Notice on River Levels.” Riverton Council, 14 Mar. 2026, "
        f"Archiver, {COPY}, {URL}. Accessed 2 Mar. 2026.\n"
    )
    assert formatted([r], "ieee") == (
        "[1] J. Port, “Council notice on river levels,” Riverton Council. Accessed: Mar. 02, "
        f"2026. [Online]. Available: {URL}. Archived copy: {COPY}, captured "
        "2026-03-02T09:30:15Z.\n"
    )
    asked = _ref("Is the river rising?")  # its own mark ends it: no period after it
    assert "“Is the River Rising?” Riverton Council" in formatted([asked], "chicago")
    assert "“Is the river rising?” Riverton Council" in formatted([asked], "ieee")


def test_a_title_that_ends_with_its_own_mark_gets_no_period_after_it() -> None:
    """APA sets its period after the title in italics: "What's next?." it printed."""
    asked = _ref("Floods & droughts: What's next?")
    apa = formatted([asked], "apa")
    assert "(2026, March 14). Floods & droughts: What's next? Archiver" in apa, apa
    assert "What's next?</i> Archiver" in formatted([asked], "apa", as_html=True)
    assert "Stop!</i> Archiver" in formatted([_ref("Stop!")], "apa", as_html=True)


def test_apa_starts_a_title_and_its_subtitle_with_a_capital() -> None:
    r = _ref("the state of the river: a review")
    assert formatted([r], "apa") == (
        "Port, J. (2026, March 14). The state of the river: A review. Archiver "
        f"({COPY}). Riverton Council. Retrieved March 2, 2026, from {URL}\n"
    )
    kept = _ref("iPhone flood alerts: https://127.0.0.1:8765/alerts")
    assert "iPhone flood alerts: https://127.0.0.1:8765/alerts." in formatted([kept], "apa")


def test_mla_cites_a_page_without_an_author_by_its_title_in_quotes() -> None:
    gone = _ref("Page gone", author=None, site="127.0.0.1", issued=None)
    assert formatted([gone], "mla") == (
        f"“Page Gone.” 127.0.0.1, Archiver, {COPY}, {URL}. Accessed 2 Mar. 2026.\n"
    )
    named = _ref("Page gone", author=None, site="Riverton Council", issued=None)
    assert formatted([named], "mla") == (
        f"“Page Gone.” Riverton Council, Archiver, {COPY}, {URL}. Accessed 2 Mar. 2026.\n"
    )
    # APA 7: a site that names itself is a group author; a bare host name is not, and the
    # title takes the author's place (the host was cited as the author)
    assert formatted([gone], "apa").startswith("Page gone. (n.d.). Archiver (")
    assert formatted([gone], "apa", as_html=True).startswith("<i>Page gone</i>. (n.d.).")
    assert formatted([named], "apa").startswith("Riverton Council. (n.d.). Page gone.")
    assert formatted([gone], "chicago").startswith("127.0.0.1. n.d.")  # the site's owner


def test_quotes_inside_a_quoted_title_become_single_quotes() -> None:
    """Chicago and MLA kept a title's own double quotes inside theirs: “"Smith & Wesson"
    Vs. O'Brien: …”; the guides (and CSL's inner-quote terms) want ‘Smith & Wesson’."""
    straight = _ref('"Smith & Wesson" vs. O\'Brien: the case', author=None, issued=None)
    for style in ("chicago", "mla"):
        assert "“‘Smith & Wesson’ vs. O'Brien: The Case.”" in formatted([straight], style)
    assert "“‘Smith & Wesson’ vs. O'Brien: The case.”" in formatted([straight], "ieee")
    curly = _ref("Floods: a claim “curly” & more")
    assert "“Floods: A Claim ‘Curly’ & More.”" in formatted([curly], "chicago")
    assert "“Floods: A Claim ‘Curly’ & More.”" in formatted([curly], "mla")
    # a style that does not quote the title leaves its quotes as they are
    assert '"Smith & Wesson" vs. O\'Brien: The case.' in formatted([straight], "apa")
    assert "Floods: A claim “curly” & more." in formatted([curly], "apa")


@pytest.mark.parametrize(
    ("title", "cased"),
    [
        ("Smith Vs. Jones", "Smith vs. Jones"),  # a stop word given capitalised
        ("Smith vs. the state", "Smith vs. the State"),  # "vs." ends no sentence
        (
            "life between the rivers, through the ages and via the sea",
            "Life between the Rivers, through the Ages and via the Sea",
        ),
        ("what they stood for", "What They Stood For"),  # the last word
        ("rivers: the view from above", "Rivers: The View from Above"),
        ("iPhone alerts of NASA", "iPhone Alerts of NASA"),  # capitals kept
        ("after the flood, before the rain", "After the Flood, Before the Rain"),
    ],
)
def test_chicago_and_mla_title_case_lowers_prepositions_and_vs(title: str, cased: str) -> None:
    r = _ref(title)
    assert f"“{cased}.”" in formatted([r], "chicago")
    assert f"“{cased}.”" in formatted([r], "mla")


def test_the_html_of_a_reference_reads_as_its_text() -> None:
    """The HTML the app copies beside the text (pasted into a word processor) wrote a
    field's text as it is: a page titled "a <b>bold</b> claim &amp; more" (its words, as
    the browser showed them) came out bold, and as "& more". Read as HTML, a reference now
    says what its text says, in every style, title first or author first."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.text = ""

        def handle_data(self, data: str) -> None:
            self.text += data

    title = 'Floods: a <b>bold</b> claim "more" &amp; less & <script>x</script>'
    for author in (None, "Jane Port"):
        for site in ("127.0.0.1", "Smith & Sons"):
            r = _ref(title, author=author, site=site)
            for style in ("apa", "chicago", "mla", "ieee", "harvard-cite-them-right"):
                read = Text()
                read.feed(formatted([r], style, as_html=True))
                assert read.text == formatted([r], style), (style, author, site)
    apa = formatted([_ref(title, author=None, site="127.0.0.1")], "apa", as_html=True)
    assert apa.startswith("<i>Floods: A &lt;b&gt;bold&lt;/b&gt; claim")  # the title in italics


def test_a_style_written_for_british_english_dates_as_british_english() -> None:
    """Cite Them Right (Harvard) sets no default locale but writes its terms for en-GB:
    citeproc-py's en-US gave "(Accessed: March 2, 2026)" where the style has "2 March
    2026". A style naming no locale, or several, keeps citeproc-py's en-US."""
    from archiver_app.cite.processor import style_locale

    r = _ref("Council notice on river levels")
    assert "(Accessed: 2 March 2026)" in formatted([r], "harvard-cite-them-right")
    assert "Accessed March 2, 2026." in formatted([r], "chicago")  # en and en-GB: en-US
    assert "Accessed 2 Mar. 2026." in formatted([r], "mla")
    assert style_locale('<style default-locale="de-DE"><locale xml:lang="en-GB"/>') is None
    assert style_locale('<style><locale xml:lang="en"/><locale xml:lang="en-GB"/>') is None
    assert style_locale('<style><locale xml:lang="en-GB"><terms/></locale>') == "en-GB"
