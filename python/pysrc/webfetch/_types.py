"""The shapes of what the tool answers (SRD FR-WF-03, FR-WF-18), for type
checkers and editors. At run time the values are plain dicts and strings."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, TypedDict

#: The HTML extraction of the ``extraction`` argument (extension): the whole
#: readable page (``"srd"``, FR-WF-13) or only the main article (``"article"``).
Extraction = Literal["srd", "article"]


class Chunk(TypedDict):
    """One chunk of the page (FR-WF-15)."""

    #: The heading in effect where the chunk begins, without ``#``, or ``""``.
    heading: str
    #: The chunk's Markdown.
    text: str
    #: The token count (cl100k) of ``text`` alone.
    token_count: int


class _FetchResponseRequired(TypedDict):
    requested_url: str
    final_url: str
    fetched_at: str
    chunks: List[Chunk]
    rendering_method: Literal["http", "browser"]
    truncated: bool
    notes: List[str]


class FetchResponse(_FetchResponseRequired, total=False):
    """A successful answer (FR-WF-03): fields in the SRD's order; ``title``,
    ``language`` and ``truncation_reason`` are present only when known, and
    ``next_start_chunk`` only for a ``start_chunk`` call the output budget cut."""

    title: str
    language: str
    truncation_reason: str
    next_start_chunk: int


class ErrorEnvelope(TypedDict):
    """The FR-WF-18 error envelope."""

    code: str
    message: str
    retryable: bool
    details: Dict[str, Any]
