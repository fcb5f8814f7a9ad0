"""What citeproc-py leaves undone of a CSL style, set right before it formats.

citeproc-py formats every reference of :mod:`archiver_app.cite` (nothing is formatted by
hand). Where it falls short of the CSL specification or of what a style asks, the parsed
style is adjusted (:func:`access_date_always`, :func:`title_not_twice`) or citeproc-py is
taught the missing behaviour once (:func:`full_names_where_asked`); nothing else of a
style changes.
"""

from __future__ import annotations

from typing import Any

_CSL = "{http://purl.org/net/xbiblio/csl}"


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
