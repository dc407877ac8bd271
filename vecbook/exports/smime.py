"""The message inside an S/MIME signature sent opaquely (``smime-type=signed-data``: Outlook without
"send clear text signed message", ``openssl smime -sign -nodetach``): a CMS SignedData (RFC 5652) whose
encapsulated content is the signed MIME entity. Only that content is read, in DER or in BER as streaming
signers write it (lengths left open, the content in chunks); the signature is not checked."""

from __future__ import annotations

# id-signedData (1.2.840.113549.1.7.2) as its encoded object identifier's bytes
SIGNED_DATA = bytes.fromhex("2a864886f70d010702")
SEQUENCE, OID, OCTETS, EXPLICIT_0 = 0x30, 0x06, 0x04, 0xA0
MAX_DEPTH = 16  # nested chunks of the content: a few at most; a deeper file is damaged or hostile


def signed_content(data: bytes) -> bytes | None:
    """The MIME entity an opaque S/MIME signature holds; None where ``data`` is no SignedData (an
    encrypted one, a damaged one)."""
    ber = _Ber(data)
    try:
        info = ber.children(ber.element(0), SEQUENCE)  # ContentInfo: contentType, [0] content
        if len(info) < 2 or ber.content(info[0]) != SIGNED_DATA or info[1][0] != EXPLICIT_0:
            return None
        signed = ber.children(info[1])[0]
        if signed[0] != SEQUENCE:
            return None
        encapsulated = ber.children(signed)[2]  # SignedData: version, digests, encapContentInfo, ...
        parts = ber.children(encapsulated)  # eContentType, [0] eContent
        if len(parts) < 2 or parts[1][0] != EXPLICIT_0:
            return None
        return ber.octets(ber.children(parts[1])[0], 0)
    except (IndexError, ValueError):
        return None


Element = tuple[int, int, int, int]  # (tag, content's start, content's end, the next element's start)


class _Ber:
    """BER elements of ``data``, each open length's end found once (a streaming signer's nested open
    lengths would otherwise be walked again at each level)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.found: dict[int, Element] = {}

    def element(self, at: int, depth: int = 0) -> Element:
        """The element at ``at``: its tag, where its content lies, and where the next one starts; BER's
        open length (0x80) runs to the end-of-contents marker after its last child."""
        if at in self.found:
            return self.found[at]
        data = self.data
        if depth > MAX_DEPTH or at + 2 > len(data):
            raise ValueError("cut or too deep")
        tag, length, start = data[at], data[at + 1], at + 2
        if tag & 0x1F == 0x1F:
            raise ValueError("a tag past 30, which CMS does not use here")
        if length == 0x80:  # open: the children, then 00 00
            end = start
            while data[end:end + 2] != b"\0\0":
                end = self.element(end, depth + 1)[3]
            self.found[at] = (tag, start, end, end + 2)
            return self.found[at]
        if length > 0x80:
            count = length & 0x7F
            if count > 4:
                raise ValueError("a length past 4 GB")
            length, start = int.from_bytes(data[start:start + count], "big"), start + count
        if start + length > len(data):
            raise ValueError("cut short")
        return tag, start, start + length, start + length

    def children(self, parent: Element, tag: int | None = None) -> list[Element]:
        """The elements inside ``parent`` (of the tag ``tag`` says it has)."""
        if tag is not None and parent[0] != tag:
            raise ValueError(f"tag {parent[0]:#x} where {tag:#x} was expected")
        found, at = [], parent[1]
        while at < parent[2]:
            found.append(self.element(at))
            at = found[-1][3]
        return found

    def content(self, element: Element) -> bytes:
        return self.data[element[1]:element[2]]

    def octets(self, element: Element, depth: int) -> bytes:
        """An OCTET STRING's bytes: a primitive one's content, a constructed one's chunks joined (BER)."""
        if element[0] == OCTETS:
            return self.content(element)
        if element[0] != OCTETS | 0x20 or depth > MAX_DEPTH:
            raise ValueError("not an OCTET STRING")
        return b"".join(self.octets(child, depth + 1) for child in self.children(element))
