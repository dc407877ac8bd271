"""The message inside an S/MIME signature sent opaquely (``smime-type=signed-data``: Outlook without
"send clear text signed message", ``openssl smime -sign -nodetach``): a CMS SignedData (RFC 5652) whose
encapsulated content is the signed MIME entity. asn1crypto reads it, in DER or in BER as streaming
signers write it (lengths left open, the content in chunks); the signature is not checked."""

from __future__ import annotations


def signed_content(data: bytes) -> bytes | None:
    """The MIME entity an opaque S/MIME signature holds; None where ``data`` is no SignedData (an
    encrypted one, a damaged one, a detached signature with no content)."""
    from asn1crypto import cms

    try:
        info = cms.ContentInfo.load(data)
        if info["content_type"].native != "signed_data":
            return None
        content = info["content"]["encap_content_info"]["content"].native
    # asn1crypto parses lazily, so a cut or damaged blob fails at any step, with any of these.
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError):
        return None
    return content if isinstance(content, bytes) else None
