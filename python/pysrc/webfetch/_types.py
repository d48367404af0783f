"""The shapes of what the tool answers (SRD FR-WF-03, FR-WF-18), for type
checkers and editors. At run time the values are plain dicts and strings."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, TypedDict

#: The HTML extraction of the ``extraction`` argument (extension): the whole
#: readable page (``"srd"``, FR-WF-13), only the main article (``"article"``), or
#: what the kind of page calls for (``"auto"``; the response then says
#: ``page_type``).
Extraction = Literal["srd", "article", "auto"]

#: What ``"auto"`` extraction found.
PageType = Literal["article", "forum", "product", "listing", "documentation", "service"]


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
    ``next_start_chunk`` only for a ``start_chunk`` call the output budget cut,
    ``page_type`` only for a page extracted in ``"auto"`` mode."""

    title: str
    language: str
    truncation_reason: str
    page_type: PageType
    next_start_chunk: int


class ErrorEnvelope(TypedDict):
    """The FR-WF-18 error envelope."""

    code: str
    message: str
    retryable: bool
    details: Dict[str, Any]
