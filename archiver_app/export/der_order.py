"""Put an authority's RFC 3161 answer in DER order before it is decoded.

DER wants the elements of a SET OF sorted by their encodings; ``rfc3161_client`` refuses
an answer whose ``SignedData`` sets are not. OpenSSL (``openssl ts -reply`` with
``certs =`` a chain) and real authorities put the certificates in the order of their chain,
not sorted. Nothing signed depends on that order: the authority's signature covers the
``TSTInfo`` (through the signed attributes), never the certificates, CRLs or the set of
signer infos around it. :func:`in_der_order` sorts those sets; since sorting only moves
whole elements, every length stays the same and the bytes are a strict DER answer with the
same signature. An answer it cannot follow (BER indefinite lengths, another shape) is
returned as it came, for the decoder to judge.
"""

from __future__ import annotations

_SEQUENCE, _SET, _OID = 0x30, 0x31, 0x06
_CONTEXT_0 = 0xA0  # ContentInfo's content [0] EXPLICIT; SignedData's certificates [0]
_CRLS = 0xA1  # SignedData's crls [1] IMPLICIT SET OF
_SETS_OF = frozenset({_SET, _CONTEXT_0, _CRLS})  # digestAlgorithms, certificates, crls,
# signerInfos: SignedData's children that are a SET OF


class _NotDer(ValueError):
    pass


def _element(data: bytes, at: int, end: int) -> tuple[int, int, int]:
    """The element at ``at``: its tag, where its content starts and where it ends."""
    if at + 2 > end:
        raise _NotDer("cut short")
    tag, first = data[at], data[at + 1]
    if tag & 0x1F == 0x1F:  # a multi-byte tag: none in a timestamp answer's outer shape
        raise _NotDer("long tag")
    start = at + 2
    if first < 0x80:
        length = first
    elif first == 0x80 or first > 0x84:  # indefinite (BER) or absurdly long
        raise _NotDer("not a definite length")
    else:
        count = first & 0x7F
        length = int.from_bytes(data[start : start + count], "big")
        start += count
    if start + length > end:
        raise _NotDer("longer than what holds it")
    return tag, start, start + length


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """Each element inside ``data[start:end]``: (tag, element start, content start, end)."""
    out, at = [], start
    while at < end:
        tag, content, stop = _element(data, at, end)
        out.append((tag, at, content, stop))
        at = stop
    return out


def in_der_order(answer: bytes) -> bytes:
    """``answer`` (a DER ``TimeStampResp``) with its ``SignedData``'s sets sorted."""
    try:
        return _sorted(answer)
    except _NotDer:
        return answer


def _sorted(answer: bytes) -> bytes:
    tag, start, end = _element(answer, 0, len(answer))
    parts = _children(answer, start, end) if tag == _SEQUENCE else []
    if len(parts) < 2 or parts[1][0] != _SEQUENCE:  # status only: no token to sort
        return answer
    token = _children(answer, parts[1][2], parts[1][3])  # ContentInfo: OID, [0] content
    if len(token) != 2 or token[0][0] != _OID or token[1][0] != _CONTEXT_0:
        return answer
    inner = _children(answer, token[1][2], token[1][3])
    if len(inner) != 1 or inner[0][0] != _SEQUENCE:
        return answer
    out = bytearray(answer)
    for child_tag, _, content, stop in _children(answer, inner[0][2], inner[0][3]):
        if child_tag in _SETS_OF:
            members = _children(answer, content, stop)
            ordered = sorted(answer[a:b] for _, a, _, b in members)
            out[content:stop] = b"".join(ordered)  # the same bytes moved: lengths hold
    return bytes(out)
