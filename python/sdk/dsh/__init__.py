"""dsh: drive the dsh coding-agent runtime from Python (standard library only).

    async with Harness() as h:
        s = await h.session()
        r = await s.run("fix the failing test")
        print(r.reason, r.text)
"""
from .errors import CLOSED, PROTOCOL_MISMATCH, REQUEST_FAILED, REQUEST_TOO_LARGE, RUNTIME_EXITED, RUNTIME_NOT_FOUND, DshError
from .harness import PROTOCOL_VERSION, ApprovalCallback, Harness
from .runtime import REPOSITORY_LAUNCHER, find_runtime
from .session import Prompt, Session
from .sync import SyncHarness, SyncSession
from .types import (
    ApprovalRequest,
    ClientTool,
    CloseResult,
    CloseTimeouts,
    Event,
    EventsPage,
    CommandResult,
    ProviderInfo,
    RunResult,
    ServerInfo,
    SessionSummary,
    ToolCall,
)

__all__ = [
    "ApprovalCallback",
    "ApprovalRequest",
    "CLOSED",
    "ClientTool",
    "CloseResult",
    "CloseTimeouts",
    "DshError",
    "Event",
    "EventsPage",
    "Harness",
    "PROTOCOL_MISMATCH",
    "PROTOCOL_VERSION",
    "Prompt",
    "ProviderInfo",
    "REPOSITORY_LAUNCHER",
    "REQUEST_FAILED",
    "REQUEST_TOO_LARGE",
    "RUNTIME_EXITED",
    "RUNTIME_NOT_FOUND",
    "RunResult",
    "CommandResult",
    "ServerInfo",
    "Session",
    "SessionSummary",
    "SyncHarness",
    "SyncSession",
    "ToolCall",
    "find_runtime",
]
