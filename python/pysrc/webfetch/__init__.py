"""webfetch: secure, token-bounded web fetching for LLM agents, from Python.

The `web_fetch` tool of the WebFetch SRD v2.4 (the Rust crate of this repository)
behind a small Python API:

- :func:`fetch` / :func:`fetch_async`: one call, one throw-away client.
- :func:`fetch_many`: several URLs at once (at most 20), each answer in order.
- :class:`WebFetch`: a client that keeps its runtime, HTTP connections, robots.txt
  cache, disk cache and browser standby across calls; thread-safe.
- :class:`FetchError`: every failure of a fetch, carrying the FR-WF-18 envelope
  (``code``, ``message``, ``retryable``, ``details``).

A response is the tool's JSON answer as a ``dict`` (keys in the SRD's order).
The GIL is released while a fetch runs. The async variants run the blocking
call in a worker thread (:func:`asyncio.to_thread`), so they need no event-loop
integration and behave exactly like the blocking ones.
"""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

from ._types import Chunk, ErrorEnvelope, Extraction, FetchResponse
from ._webfetch import Client as _Client

__all__ = [
    "Chunk",
    "ConfigError",
    "ErrorEnvelope",
    "Extraction",
    "FetchError",
    "FetchResponse",
    "WebFetch",
    "fetch",
    "fetch_async",
    "fetch_many",
]

__version__ = "0.1.0"

#: A configuration file: a path to a TOML file with a ``[tools.webfetch]`` table.
ConfigPath = Union[str, "os.PathLike[str]"]


class FetchError(Exception):
    """A fetch failed: the tool's FR-WF-18 error envelope as an exception.

    ``code`` is a stable registry code (``"ssrf_blocked"``, ``"http_4xx"``,
    ``"timeout"``, ...), ``retryable`` says whether trying again may succeed,
    ``details`` holds the code's context (e.g. ``blocked_ip`` or ``status``).
    ``str(error)`` is ``"<code>: <message>"``; :attr:`envelope` is the dict the
    tool answered with, ready to hand back to a model.
    """

    code: str
    message: str
    retryable: bool
    details: Dict[str, Any]

    def __init__(
        self,
        code: str,
        message: str,
        retryable: bool = False,
        details: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = retryable
        self.details = dict(details) if details else {}

    @classmethod
    def from_envelope(cls, envelope: ErrorEnvelope) -> "FetchError":
        """The exception for an envelope ``{code, message, retryable, details}``."""
        return cls(
            envelope["code"],
            envelope["message"],
            bool(envelope["retryable"]),
            envelope.get("details") or {},
        )

    @property
    def envelope(self) -> ErrorEnvelope:
        """The FR-WF-18 envelope, in its field order."""
        return {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "details": dict(self.details),
        }

    def __reduce__(self) -> Any:
        # Pickles (multiprocessing, concurrent.futures) with all four fields.
        return (type(self), (self.code, self.message, self.retryable, self.details))

    def __repr__(self) -> str:
        return (
            f"FetchError(code={self.code!r}, message={self.message!r}, "
            f"retryable={self.retryable!r}, details={self.details!r})"
        )


class ConfigError(ValueError):
    """The configuration cannot be read or parsed, or it disables ``web_fetch``."""


class WebFetch:
    """A ``web_fetch`` client that keeps its state across calls.

    ``config`` is the path of a TOML file with a ``[tools.webfetch]`` table;
    ``config_toml`` is the text of such a file; give at most one (neither: the
    defaults). Configuration warnings are issued as :class:`RuntimeWarning`.

    The client owns a tokio runtime, the HTTP client, the robots.txt cache and
    the disk cache, and, with ``browser_standby`` (default), keeps one Chromium
    launched ahead for its next browser render. It is safe to share between
    threads and tasks; calls run concurrently. :meth:`close` (or ``with`` /
    ``async with``) shuts the standby Chromium down; a closed client refuses calls.
    """

    def __init__(
        self,
        config: Optional[ConfigPath] = None,
        *,
        config_toml: Optional[str] = None,
        browser_standby: bool = True,
    ) -> None:
        if config is not None and config_toml is not None:
            raise TypeError("give config (a path) or config_toml (TOML text), not both")
        try:
            self._client = _Client(
                os.fspath(config) if config is not None else None,
                config_toml,
                browser_standby,
            )
        except ValueError as error:
            raise ConfigError(str(error)) from None
        for warning in self._client.warnings:
            warnings.warn(warning, RuntimeWarning, stacklevel=2)

    def fetch(
        self,
        url: str,
        *,
        max_chunk_tokens: Optional[int] = None,
        no_cache: bool = False,
        force_browser: bool = False,
        extraction: Optional[Extraction] = None,
        start_chunk: Optional[int] = None,
        max_output_bytes: Optional[int] = None,
    ) -> FetchResponse:
        """Fetches ``url`` and returns the response; raises :class:`FetchError`.

        ``max_chunk_tokens`` (128..=2048), ``no_cache`` and ``force_browser`` are
        the SRD's arguments; ``extraction`` (``"srd"``, ``"article"`` or ``"auto"``) and
        ``start_chunk`` (0-based; the response then carries ``next_start_chunk``
        when the output budget cut it) are this implementation's extensions.
        ``None`` leaves an argument to the configuration's default.
        ``max_output_bytes`` caps the response JSON (``None``: unlimited); a page
        that cannot fit raises ``FetchError`` with code ``tool_output_limit``.
        """
        args = _arguments(
            url,
            max_chunk_tokens=max_chunk_tokens,
            no_cache=no_cache,
            force_browser=force_browser,
            extraction=extraction,
            start_chunk=start_chunk,
        )
        if max_output_bytes is not None and max_output_bytes < 0:
            raise ValueError("max_output_bytes must be >= 0")
        ok, text = self._client.call(json.dumps(args), max_output_bytes)
        answer = json.loads(text)
        if ok:
            return answer  # type: ignore[no-any-return]
        raise FetchError.from_envelope(answer)

    def fetch_many(
        self,
        urls: Sequence[str],
        *,
        max_chunk_tokens: Optional[int] = None,
        no_cache: bool = False,
        force_browser: bool = False,
        extraction: Optional[Extraction] = None,
        max_output_bytes: Optional[int] = None,
    ) -> List[Union[FetchResponse, "FetchError"]]:
        """Fetches every URL of ``urls`` (1 to 20) with the same arguments, at
        most ten at once (each site's politeness limit kept) and the same URL
        once, and returns one item per URL in their order: the response, or the
        :class:`FetchError` of that URL (returned, not raised: one failed page
        does not fail the others). Arguments that are not a batch (no URLs,
        more than 20, a bad value) raise :class:`FetchError` with ``bad_args``.
        ``max_output_bytes`` caps each response's JSON.
        """
        args = _arguments(
            "",
            max_chunk_tokens=max_chunk_tokens,
            no_cache=no_cache,
            force_browser=force_browser,
            extraction=extraction,
            start_chunk=None,
        )
        del args["url"]
        args["urls"] = list(urls)
        if max_output_bytes is not None and max_output_bytes < 0:
            raise ValueError("max_output_bytes must be >= 0")
        ok, answers, envelope = self._client.call_many(json.dumps(args), max_output_bytes)
        if not ok:
            raise FetchError.from_envelope(json.loads(envelope))
        return [
            json.loads(text) if fetched else FetchError.from_envelope(json.loads(text))
            for fetched, text in answers
        ]

    async def fetch_async(
        self,
        url: str,
        *,
        max_chunk_tokens: Optional[int] = None,
        no_cache: bool = False,
        force_browser: bool = False,
        extraction: Optional[Extraction] = None,
        start_chunk: Optional[int] = None,
        max_output_bytes: Optional[int] = None,
    ) -> FetchResponse:
        """:meth:`fetch` for asyncio: the blocking call runs in the event loop's
        default executor (:func:`asyncio.to_thread`), so the loop keeps running.
        Cancelling the awaiting task does not stop the fetch under way; it ends
        within the tool's own time budget (``timeout_seconds``).
        """
        return await asyncio.to_thread(
            self.fetch,
            url,
            max_chunk_tokens=max_chunk_tokens,
            no_cache=no_cache,
            force_browser=force_browser,
            extraction=extraction,
            start_chunk=start_chunk,
            max_output_bytes=max_output_bytes,
        )

    def close(self) -> None:
        """Shuts the browser standby down and refuses later calls. Idempotent."""
        self._client.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return bool(self._client.closed)

    def __enter__(self) -> "WebFetch":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> "WebFetch":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.close)


def fetch(
    url: str,
    *,
    max_chunk_tokens: Optional[int] = None,
    no_cache: bool = False,
    force_browser: bool = False,
    extraction: Optional[Extraction] = None,
    start_chunk: Optional[int] = None,
    config: Optional[ConfigPath] = None,
    config_toml: Optional[str] = None,
    max_output_bytes: Optional[int] = None,
) -> FetchResponse:
    """Fetches ``url`` once with a throw-away client (no browser standby) and
    returns the response; raises :class:`FetchError`. The arguments are those of
    :meth:`WebFetch.fetch` and :class:`WebFetch`. A host that fetches more than
    once should keep a :class:`WebFetch`.
    """
    with WebFetch(config, config_toml=config_toml, browser_standby=False) as client:
        return client.fetch(
            url,
            max_chunk_tokens=max_chunk_tokens,
            no_cache=no_cache,
            force_browser=force_browser,
            extraction=extraction,
            start_chunk=start_chunk,
            max_output_bytes=max_output_bytes,
        )


def fetch_many(
    urls: Sequence[str],
    *,
    max_chunk_tokens: Optional[int] = None,
    no_cache: bool = False,
    force_browser: bool = False,
    extraction: Optional[Extraction] = None,
    config: Optional[ConfigPath] = None,
    config_toml: Optional[str] = None,
    max_output_bytes: Optional[int] = None,
) -> List[Union[FetchResponse, FetchError]]:
    """:meth:`WebFetch.fetch_many` with a throw-away client (no browser standby)."""
    with WebFetch(config, config_toml=config_toml, browser_standby=False) as client:
        return client.fetch_many(
            urls,
            max_chunk_tokens=max_chunk_tokens,
            no_cache=no_cache,
            force_browser=force_browser,
            extraction=extraction,
            max_output_bytes=max_output_bytes,
        )


async def fetch_async(
    url: str,
    *,
    max_chunk_tokens: Optional[int] = None,
    no_cache: bool = False,
    force_browser: bool = False,
    extraction: Optional[Extraction] = None,
    start_chunk: Optional[int] = None,
    config: Optional[ConfigPath] = None,
    config_toml: Optional[str] = None,
    max_output_bytes: Optional[int] = None,
) -> FetchResponse:
    """:func:`fetch` for asyncio, run in a worker thread (see
    :meth:`WebFetch.fetch_async`)."""
    return await asyncio.to_thread(
        fetch,
        url,
        max_chunk_tokens=max_chunk_tokens,
        no_cache=no_cache,
        force_browser=force_browser,
        extraction=extraction,
        start_chunk=start_chunk,
        config=config,
        config_toml=config_toml,
        max_output_bytes=max_output_bytes,
    )


def _arguments(
    url: str,
    *,
    max_chunk_tokens: Optional[int],
    no_cache: bool,
    force_browser: bool,
    extraction: Optional[str],
    start_chunk: Optional[int],
) -> Dict[str, Any]:
    """The tool arguments (FR-WF-02 plus extensions); an argument left at
    ``None`` is omitted so the configuration's default applies. Values are passed
    as given: the tool validates them and answers ``bad_args``."""
    args: Dict[str, Any] = {
        "url": url,
        "no_cache": no_cache,
        "force_browser": force_browser,
    }
    if max_chunk_tokens is not None:
        args["max_chunk_tokens"] = max_chunk_tokens
    if extraction is not None:
        args["extraction"] = extraction
    if start_chunk is not None:
        args["start_chunk"] = start_chunk
    return args
