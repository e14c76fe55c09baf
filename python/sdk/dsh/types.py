"""Typed results of the SDK: plain dataclasses over the protocol's JSON, read from the wire types that
``protocol.py`` (generated from the protocol declarations) gives."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from . import protocol


@dataclass(frozen=True)
class Event:
    """One committed event of a session log: ``type`` (``assistant/chunk``, ``tool/result``, …), ``seq``, ``time``
    (epoch ms) and its ``data`` as the runtime logged it."""

    type: str
    seq: int
    time: int
    data: Dict[str, Any]

    @classmethod
    def from_wire(cls, raw: protocol.SessionEvent) -> "Event":
        return cls(type=raw["type"], seq=raw["seq"], time=raw["time"], data=raw.get("data") or {})


@dataclass(frozen=True)
class ApprovalRequest:
    """A tool call that needs a person's approval: ``tool``, ``arguments``, ``reason`` (why), ``rule`` (the
    offered standing rule). Answer ``"allow_once"`` (or True) to let it run; ``"allow_session"`` /
    ``"allow_always"`` also keep ``rule`` (when there is one) for the session / the workspace;
    ``{"answer": "reject", "message": "..."}`` refuses it and the model reads the message;
    ``{"answer": "allow_once", "arguments": {...}}`` runs it with those arguments instead (validated again,
    logged as ``tool/edited``); anything else refuses it."""

    request_id: str
    session_id: str
    tool: str
    summary: str
    reason: str
    call_id: Optional[str] = None
    #: The grant rule a standing answer keeps (``bash(npm test *)``); None: only once or reject.
    rule: Optional[str] = None
    #: The call's arguments as the model gave them.
    arguments: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, raw: protocol.ApprovalRequestParams) -> "ApprovalRequest":
        return cls(
            request_id=raw["requestId"],
            session_id=raw["sessionId"],
            tool=raw["tool"],
            summary=raw["summary"],
            reason=raw["reason"],
            call_id=raw.get("callId"),
            rule=raw.get("rule"),
            arguments=dict(raw.get("arguments") or {}),
        )


@dataclass(frozen=True)
class RunResult:
    """What one prompt came to: the last text the model wrote, how the (last) turn ended, and every event."""

    session_id: str
    message_id: str
    text: str
    reason: str
    events: List[Event]
    error: Optional[Dict[str, str]] = None
    #: What the run shows, as the display fold every surface shares has it (``session/view`` from the run's
    #: first event): ``protocol.Item`` dicts, told apart by ``kind`` (``user``, ``assistant``, ``tool``, …).
    items: List[protocol.Item] = field(default_factory=list)
    #: Tokens of the run's model requests as logged: ``requests``, ``input`` (cache reads and writes excluded),
    #: ``cacheRead``, ``cacheWrite``, ``output``, and ``cacheHitShare`` (cached input / all input; None with no input).
    usage: Dict[str, Any] = field(default_factory=dict)
    #: USD from the runtime's price table (``usage.prices`` over the shipped prices); None when a model had no price.
    cost: Optional[float] = 0
    #: USD the provider's prompt cache saved in the run (cache reads at the input price less their cached price); None when unpriced.
    cache_saved: Optional[float] = 0
    #: The ``provider/model``s of the run without a price.
    unpriced: List[str] = field(default_factory=list)
    #: From sending the prompt to the session being idle again.
    duration_ms: int = 0


@dataclass(frozen=True)
class CommandResult:
    """What a slash command came to (``session/command``). ``run`` is the turn of a user command's prompt;
    ``new_session_id`` the session ``/clear`` or ``/fork`` started; ``unknown`` a ``/word`` no command has."""

    handled: bool
    name: Optional[str] = None
    output: Optional[str] = None
    unknown: Optional[str] = None
    error: Optional[Dict[str, str]] = None
    new_session_id: Optional[str] = None
    run: Optional[RunResult] = None


@dataclass(frozen=True)
class ProviderInfo:
    provider: str
    models: List[Dict[str, Any]]
    error: Optional[str] = None


@dataclass(frozen=True)
class ServerInfo:
    """What the runtime said about itself in ``initialize``."""

    protocol_version: int
    name: str
    version: str
    profile: str
    approvals: bool
    permission_presets: bool
    providers: List[ProviderInfo]
    cwd: str
    #: The longest request line (bytes) the runtime reads; longer requests fail with REQUEST_TOO_LARGE.
    max_line_bytes: int

    @classmethod
    def from_wire(cls, raw: protocol.InitializeResult) -> "ServerInfo":
        return cls(
            protocol_version=raw["protocolVersion"],
            name=raw["serverInfo"]["name"],
            version=raw["serverInfo"]["version"],
            profile=raw["serverInfo"]["profile"],
            approvals=raw["capabilities"]["approvals"],
            permission_presets=raw["capabilities"]["permissionPresets"],
            providers=[ProviderInfo(p["provider"], p.get("models", []), p.get("error")) for p in raw["providers"]],
            cwd=raw["cwd"],
            max_line_bytes=raw["limits"]["maxLineBytes"],
        )


@dataclass(frozen=True)
class SessionSummary:
    """A stored session as ``session/list`` reports it."""

    id: str
    cwd: str
    created_at: int
    updated_at: int
    events: int
    turns: int
    status: str
    live: bool
    first_prompt: Optional[str] = None
    title: Optional[str] = None
    parent: Optional[Dict[str, Any]] = None

    @classmethod
    def from_wire(cls, raw: protocol.SessionSummary) -> "SessionSummary":
        return cls(
            id=raw["id"],
            cwd=raw["cwd"],
            created_at=raw["createdAt"],
            updated_at=raw["updatedAt"],
            events=raw["events"],
            turns=raw["turns"],
            status=raw["status"],
            live=raw["live"],
            first_prompt=raw.get("firstPrompt"),
            title=raw.get("title"),
            parent=raw.get("parent"),
        )


@dataclass(frozen=True)
class EventsPage:
    events: List[Event]
    #: The seq of the next page, or None at the end of the log.
    next_seq: Optional[int]
    length: int


@dataclass(frozen=True)
class CloseTimeouts:
    """Seconds each step of ``close()`` may take before the next, harder one."""

    shutdown: float = 5.0
    eof: float = 2.0
    term: float = 2.0


@dataclass(frozen=True)
class CloseResult:
    """Which step ended the runtime (``shutdown``, ``eof``, ``sigterm``, ``sigkill`` or ``already-exited``) and
    its return code (negative: killed by that signal)."""

    stage: str
    returncode: Optional[int] = field(default=None)


#: What a client tool's handler returns: text, or ``{"content": str | blocks, "isError": bool}``. May be async.
ToolHandler = Callable[[Dict[str, Any], "ToolCall"], Any]


@dataclass(frozen=True)
class ClientTool:
    """A tool the program implements: the model's calls (arguments valid against ``parameters``, a JSON
    Schema of type ``object``) come to ``handler``; a raise is a TOOL_FAILED result carrying its message."""

    name: str
    description: str
    parameters: Dict[str, Any]
    handler: ToolHandler
    #: True: every call is an approval request first.
    approval: bool = False

    def to_wire(self) -> protocol.ClientTool:
        wire: protocol.ClientTool = {"name": self.name, "description": self.description, "parameters": self.parameters}
        if self.approval:
            wire["approval"] = True
        return wire


@dataclass(frozen=True)
class ToolCall:
    """One call of a client tool (``tool/call``)."""

    session_id: str
    call_id: str
    tool: str
    arguments: Dict[str, Any]

    @classmethod
    def from_wire(cls, raw: protocol.ToolCallParams) -> "ToolCall":
        return cls(session_id=raw["sessionId"], call_id=raw["callId"], tool=raw["tool"], arguments=dict(raw["arguments"]))
