"""Every failure of the SDK is a DshError with a typed ``code``."""
from __future__ import annotations

from typing import Any, Dict, Optional

#: No runtime to launch: DSH_BIN, ``dsh`` on PATH and the checkout's launcher were all missing.
RUNTIME_NOT_FOUND = "RUNTIME_NOT_FOUND"
#: The runtime exited (or never answered ``initialize``); the message quotes the end of its stderr.
RUNTIME_EXITED = "RUNTIME_EXITED"
#: The runtime speaks another protocol version.
PROTOCOL_MISMATCH = "PROTOCOL_MISMATCH"
#: The runtime refused a request; ``rpc`` holds its JSON-RPC error (``rpc["data"]["code"]`` is the typed code).
REQUEST_FAILED = "REQUEST_FAILED"
#: A request longer than the runtime's line limit (``initialize``'s ``limits.maxLineBytes``): not sent.
REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
#: The harness was closed.
CLOSED = "CLOSED"


class DshError(Exception):
    """A failure of the SDK or of the runtime it drives, named by ``code``."""

    def __init__(self, code: str, message: str, rpc: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rpc = rpc

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
