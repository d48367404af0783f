"""The native half of webfetch (Rust, PyO3). Use the ``webfetch`` package's
API instead; this module is an implementation detail."""

from typing import List, Optional, Tuple

class Client:
    """A ``web_fetch`` tool with its runtime, caches and browser standby."""

    def __init__(
        self,
        config_path: Optional[str] = None,
        config_toml: Optional[str] = None,
        browser_standby: bool = True,
    ) -> None: ...
    @property
    def warnings(self) -> List[str]: ...
    @property
    def closed(self) -> bool: ...
    def call(
        self, args_json: str, max_output_bytes: Optional[int] = None
    ) -> Tuple[bool, str]:
        """``(True, response_json)`` or ``(False, error_envelope_json)``; the GIL
        is released meanwhile."""
        ...
    def call_many(
        self, args_json: str, max_output_bytes: Optional[int] = None
    ) -> Tuple[bool, List[Tuple[bool, str]], str]:
        """``(True, [(ok, json), ...], "")`` in the order of ``urls``, or
        ``(False, [], error_envelope_json)`` for arguments that are not a batch;
        the GIL is released meanwhile."""
        ...
    def close(self) -> None: ...
