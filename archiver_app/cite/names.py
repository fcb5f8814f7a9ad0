"""Authors' names as citations need them: a person's family and given names, or a group's
name whole.

Reference managers split "Jane Port" into family "Port" and given "Jane", and initial-based
styles print "Port, J.". A group must not be split ("World Health Organization" is not
"Organization, W. H."): a name is kept whole (CSL ``literal``, BibTeX ``{braces}``) when the
page's structured data says it is an organisation, or when it reads like one — a word
institutions use (Organization, Press, News, Ministry, University...), "and"/"&", "of",
"for" or "the", more than four words, or a single word. A name in a script without letter
case (Arabic, Hebrew, Chinese, Japanese, Korean...) is kept whole too: initials of such
names mean nothing (citeproc-py would print ". محمد ."). The rule is conservative: a person
whose family name is such a word ("Emily Post") is cited whole, never mangled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Words that name institutions, not people (compared without case or trailing dots).
_GROUP_WORDS = """
    academy administration agence agency alliance archive archives assembly associates
    association authority bank board broadcasting bureau center centre college commission
    committee company congress consortium corp corporation council daily department desk dept
    editorial editors federation fondation foundation fund gazette gmbh government group
    herald hospital inc incorporated institut institute instituto journal lab laboratories
    laboratory labs library limited llc llp ltd magazine media ministerio ministry ministère
    museum network networks news newspaper newsroom office organisation organization
    parliament partners partnership plc post press programme project radio school secretariat
    senate service services society staff stiftung studio studios team television times
    tribune trust tv union universidad universita università universität université
    university
"""
GROUP_WORDS = frozenset(_GROUP_WORDS.split())
#: Words that join the words of a group's name, never a person's ("Friends of the Earth").
_JOINING = frozenset({"and", "of", "for", "the"})
#: What follows a family name: "Jr.", "Sr.", "II"...
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "v"})
# Han, kana and Hangul: names written family first, without a space ("王小明").
_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]")


@dataclass(frozen=True)
class Name:
    """An author: a person's family and given names (with a particle such as "de la" or
    "van", and a suffix such as "Jr."), or a group's name whole (``literal``)."""

    family: str = ""
    given: str = ""
    particle: str = ""
    literal: str = ""
    suffix: str = ""

    def csl(self) -> dict[str, str]:
        if self.literal:
            return {"literal": self.literal}
        out = {"family": self.family, "given": self.given}
        out |= {"non-dropping-particle": self.particle} if self.particle else {}
        return out | ({"suffix": self.suffix} if self.suffix else {})

    def natural(self) -> str:
        """ "Maria de la Mar", "Martin Luther King Jr.", or the group's name."""
        parts = (self.given, self.particle, self.family, self.suffix)
        return self.literal or " ".join(p for p in parts if p)

    def inverted(self) -> str:
        """ "de la Mar, Maria", "King, Martin Luther, Jr." (RIS's order), or the group's
        name."""
        family = f"{self.particle} {self.family}".strip()
        parts = (family, self.given, self.suffix)
        return self.literal or ", ".join(p for p in parts if p)

    def bibtex(self) -> str:
        """BibTeX's "von Last, Jr, First" ("King, Jr., Martin Luther"), or the group's name
        (which the caller braces)."""
        if self.literal or not self.suffix:
            return self.inverted()
        family = f"{self.particle} {self.family}".strip()
        return ", ".join(p for p in (family, self.suffix, self.given) if p)


def parse_name(text: str, *, group: bool = False) -> Name:
    """ "Family, Given" and "Given [particle] Family [suffix]" are split; a ``group``, a
    name that reads as a group's and a name without letter case stay whole (see the
    module's docstring)."""
    text = " ".join(text.split())
    if group or "&" in text:
        return Name(literal=text)
    if not any(c.lower() != c.upper() for c in text):  # no letter case: Arabic, Chinese...
        return Name(literal=_natural_order(text))
    if "," in text:
        return _inverted_name(text)
    return _natural_name(text.split())


def is_group(text: str) -> bool:
    """Whether ``text`` reads as a group's name (see the module's docstring)."""
    words = text.split()
    keys = [w.strip(".,;:()").casefold() for w in words]
    return (
        "&" in text
        or bool(GROUP_WORDS.intersection(keys))
        or bool(_JOINING.intersection(w for w in words if w.islower()))
    )


def _natural_order(text: str) -> str:
    # "Family, Given" of a name without letter case, as it is written: family first and
    # joined in Chinese, Japanese and Korean, given name first otherwise.
    family, _, given = (p.strip() for p in text.partition(","))
    if not given:
        return text
    return family + given if _CJK.search(text) else f"{given} {family}"


def _is_suffix(word: str) -> bool:
    return word.rstrip(".").casefold() in SUFFIXES


def _inverted_name(text: str) -> Name:
    """ "Port, Jane", "de la Mar, Maria", "King, Martin Luther, Jr.", "King Jr., Martin
    Luther" and "Martin Luther King, Jr."."""
    family, given, *rest = (p.strip() for p in text.split(","))
    suffix = rest[0] if len(rest) == 1 and _is_suffix(rest[0]) else ""
    if rest and not suffix:  # "Port, Jane, Quay, Ali": not one person
        return Name(literal=text)
    if _is_suffix(given) and not suffix:  # "Martin Luther King, Jr."
        return _natural_name([*family.split(), given])
    words = family.split()
    if words and len(words) > 1 and _is_suffix(words[-1]) and not suffix:
        suffix, words = words[-1], words[:-1]
    group_words = GROUP_WORDS.intersection(w.strip(".").casefold() for w in given.split())
    if not words or not given or group_words or (len(words) > 1 and is_group(family)):
        return Name(literal=text)  # "University of Oxford, Department of Physics"
    lower = [w for w in words[:-1] if w.islower()]
    if lower == words[:-1]:  # "de la Mar, Maria"
        return Name(family=words[-1], given=given, particle=" ".join(lower), suffix=suffix)
    return Name(family=" ".join(words), given=given, suffix=suffix)


def _natural_name(words: list[str]) -> Name:
    """ "Jane Port", "Ludwig van Beethoven", "Martin Luther King Jr."; one word, more than
    four or a group's words stay whole."""
    suffix = ""
    if len(words) > 2 and _is_suffix(words[-1]):
        suffix, words = words[-1], words[:-1]
    text = " ".join(words)
    if not 2 <= len(words) <= 4 or is_group(text):
        return Name(literal=" ".join([text, suffix]).strip())
    # The given names run to the first lowercase word; lowercase words are the particle.
    cut = next((i for i, w in enumerate(words[1:-1], 1) if w.islower()), len(words) - 1)
    particle = [w for w in words[cut:-1] if w.islower()]
    if len(particle) != len(words) - 1 - cut:  # "Maria de Mar Vella": not one pattern
        return Name(family=words[-1], given=" ".join(words[:-1]), suffix=suffix)
    return Name(
        family=words[-1], given=" ".join(words[:cut]), particle=" ".join(particle), suffix=suffix
    )
