"""What citeproc-py leaves undone of a CSL style, set right before it formats.

citeproc-py formats every reference of :mod:`archiver_app.cite` (nothing is formatted by
hand). Where it falls short of the CSL specification or of what a style asks, the parsed
style is adjusted (:func:`access_date_always`, :func:`title_not_twice`), given the locale
it was written for (:func:`style_locale`), or citeproc-py is taught the missing behaviour
once (:func:`full_names_where_asked`, :func:`title_case_as_the_guides`,
:func:`inner_quotes_where_quoted`); nothing else of a style changes.
"""

from __future__ import annotations

import re
from typing import Any

_CSL = "{http://purl.org/net/xbiblio/csl}"


#: The ``xml:lang`` of a style's own ``cs:locale`` sections, and its ``default-locale``.
_STYLE_LOCALES = re.compile(r'<locale\s[^>]*xml:lang="([^"]+)"')
_DEFAULT_LOCALE = re.compile(r"<style\s[^>]*default-locale=")


def style_locale(csl: str) -> str | None:
    """The locale a style written for one English but sets none is formatted in: the
    dialect its own ``cs:locale`` sections all name, when that is the only one they name.
    Harvard Cite Them Right sets no ``default-locale`` but writes its terms for en-GB; in
    citeproc-py's en-US it gave "(Accessed: November 29, 2026)" for "(Accessed: 29
    November 2026)". A style that sets a locale, names none, or names several (Chicago's
    en and en-GB, APA's many languages) is left to its own (None)."""
    if _DEFAULT_LOCALE.search(csl):
        return None
    named = set(_STYLE_LOCALES.findall(csl))
    return named.pop() if len(named) == 1 and "-" in next(iter(named)) else None


def access_date_always(style: Any) -> None:
    """Print the access date whether or not the page has a date of its own. APA, Chicago
    and MLA print it only for an undated page, since a live page's own date says which
    version was read; an archived copy is the version of its capture date, which every
    citation of it must carry ("Retrieved March 2, 2026, from", "Accessed 2 Mar. 2026").

    In ``style`` (a parsed CSL style), "issued" is dropped from the conditions that keep
    ``accessed`` out: an enclosing ``match="none"`` branch, and an earlier ``match="any"``
    branch of the same choice taken instead (a condition left empty is then always true,
    or never taken). Nothing else of the style changes."""
    for date in style.iter(f"{_CSL}date"):
        if date.get("variable") != "accessed":
            continue
        node = date
        while (branch := node.getparent()) is not None and branch.tag != f"{_CSL}macro":
            if branch.tag in (f"{_CSL}if", f"{_CSL}else-if"):
                if branch.get("match") == "none":
                    _drop_issued(branch)
                for earlier in branch.itersiblings(preceding=True):
                    if earlier.get("match") == "any":
                        _drop_issued(earlier)
            node = branch


def title_not_twice(style: Any) -> None:
    """citeproc-py does not suppress what a name's ``substitute`` printed where it comes
    again, when it is a macro: MLA printed a page without an author as "“Page Gone.” “Page
    Gone.” ...". Where the bibliography renders a macro right after the one whose names it
    substitutes (MLA's title after its author), printing it in the author's place is
    printing it in its own, so the substitute is dropped: the output is what CSL asks."""
    layout = style.find(f"{_CSL}bibliography/{_CSL}layout")
    for first in layout.iter(f"{_CSL}text") if layout is not None else ():
        after = first.getnext()
        if not (first.get("macro") and after is not None and after.get("macro")):
            continue
        for macro in style.findall(f"{_CSL}macro"):
            if macro.get("name") != first.get("macro"):
                continue
            for substitute in macro.iter(f"{_CSL}substitute"):
                for text in substitute.findall(f"{_CSL}text"):
                    if text.get("macro") == after.get("macro"):
                        substitute.remove(text)


def _drop_issued(condition: Any) -> None:
    tests = (condition.get("variable") or "").split()
    if "issued" not in tests:
        return
    rest = [v for v in tests if v != "issued"]
    if rest:
        condition.set("variable", " ".join(rest))
    else:
        del condition.attrib["variable"]


def full_names_where_asked() -> None:
    """Teach citeproc-py CSL 1.0.1's ``initialize="false"``, once: it ignores it and
    initialized every given name, so MLA and Chicago (whose bibliography names ask for full
    given names) cited "Port, J." for Jane Port. A citeproc-py that knows the option has it
    among its defaults, and is left alone."""
    from citeproc import model

    defaults = model.CitationStylesElement._default_options
    if "initialize" in defaults:
        return
    defaults["initialize"] = "true"
    initials = model.Name.initialize

    def initialize(self: Any, given: str, mark: str, context: Any) -> str:
        if self.get_option("initialize", context) == "false":
            return given
        return str(initials(self, given, mark, context))

    model.Name.initialize = initialize


# ---------------------------------------------------------------------- title case

#: Words a title in title case keeps in lower case, but first, last or after a colon: the
#: CSL 1.0.1 stop words citeproc-py knows, and the prepositions Chicago (CMOS 8.159: "vs."
#: and "via" too) and MLA lower-case whatever their length, but those that are as often
#: conjunctions or adverbs (after, before, since, until, out, off), which stay capitalised.
_STOP_WORDS = """
    a an and as at but by down for from in into nor of on onto or over so the till to up
    via with yet about above across against along amid among amongst around atop behind
    below beneath beside besides between beyond despite during except inside like near per
    through throughout toward towards under underneath unlike upon versus vs vs. v v. within
    without
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
#: What may stand before a word's first letter, and after its last, in a title.
_LEAD = "\"'“‘([{¿¡"
_CLOSING = "\"'”’)]}"


def title_case_as_the_guides() -> None:
    """Teach citeproc-py's ``text-case="title"`` (Chicago's and MLA's titles) the rules the
    CSL specification and the guides give, once: it capitalised "vs." ("Smith Vs.
    O'Brien"), lower-cased no preposition beyond its short list, capitalised the word after
    "vs." as a sentence's first, and left a word after an opening quote in lower case
    (“curly”). Stop words (:data:`STOP_WORDS`) stay or become lower case but first, last and
    after a colon or a sentence's end; other words in lower case get a capital first
    letter, after any opening quote or bracket; words with capitals (iPhone, NASA) and what
    is marked to keep its case stay as they are."""
    from citeproc import model

    if getattr(model.TextCased, "_as_the_guides", False):
        return
    original = model.TextCased.case

    def case(self: Any, text: Any, language: str | None = None) -> Any:
        if self.get("text-case") != "title" or language != "en":
            return original(self, text, language)
        words = list(text.words())
        out, first = [], True
        for i, word in enumerate(words):
            out.append(_title_word(word, first=first, last=i == len(words) - 1))
            end = str(word).rstrip(_CLOSING)  # a sentence's end, not "vs."'s period
            first = end.endswith((":", "?", "!")) or (end.endswith(".") and not _stop(end))
        return " ".join(out)

    model.TextCased.case = case
    model.TextCased._as_the_guides = True


def _stop(word: str) -> bool:
    """Is ``word`` (with its quotes and punctuation) one of :data:`STOP_WORDS`?"""
    key = word.lstrip(_LEAD).rstrip(_CLOSING + ",;:!?").lower()
    return key in STOP_WORDS or key.rstrip(".") in STOP_WORDS


def _title_word(word: Any, *, first: bool, last: bool) -> Any:
    """One word of a title in title case (``word``: citeproc-py's String, or NoCase for what
    keeps its case)."""
    from citeproc.string import NoCase

    text = str(word)
    lead = len(text) - len(text.lstrip(_LEAD))
    core = text[lead:]
    if isinstance(word, NoCase) or not core[:1].isalpha():
        return word
    if _stop(text) and not (first or last):  # "of", "Of", "vs.": lower case; "US" stays
        lowered = core.islower() or core == core.capitalize()
        return word.__class__(text[:lead] + core.lower()) if lowered else word
    if core.islower():
        return word.__class__(text[:lead] + core[0].upper() + core[1:])
    return word


# ---------------------------------------------------------------------- quotes

_OPENING = re.compile(r'(^|[\s(\[{—–-])["“]')


def inner_quotes_where_quoted() -> None:
    """Teach citeproc-py that quotes inside a quoted part are its locale's inner quotes,
    once: a title with quotes of its own was cited “"Smith & Wesson" vs. O'Brien” or
    “Floods … “curly” …”, where the guides (and CSL's ``open-inner-quote`` term) want
    “‘Smith & Wesson’ vs. O'Brien”. The part's double quotes, straight or curly, become
    the inner quotes; single quotes stay (an apostrophe cannot be told from one)."""
    from citeproc import model

    if getattr(model.Quoted, "_inner_quotes", False):
        return
    original = model.Quoted.quote

    def quote(self: Any, string: Any) -> Any:
        if self.get("quotes", "false").lower() == "true" and {'"', "“", "”"} & set(str(string)):
            opening = str(self.get_single_term(name="open-inner-quote"))
            closing = str(self.get_single_term(name="close-inner-quote"))
            text = _OPENING.sub(lambda m: m[1] + opening, str(string))
            string = text.replace('"', closing).replace("“", opening).replace("”", closing)
        return original(self, string)

    model.Quoted.quote = quote
    model.Quoted._inner_quotes = True
