"""The asyncio harness: launches ``dsh --profile sdk`` and speaks its protocol."""
from __future__ import annotations

import asyncio
import inspect
import os
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .connection import Connection, Listener
from .errors import CLOSED, PROTOCOL_MISMATCH, DshError
from .protocol import PROTOCOL_VERSION, SearchHit, SessionViewResult
from .runtime import find_runtime
from .session import Session
from .types import ApprovalRequest, ClientTool, CloseResult, CloseTimeouts, Event, EventsPage, ServerInfo, SessionSummary, ToolCall

#: A choice (``"allow_once"``, True, …) or ``{"answer", "message"?, "arguments"?}`` (see ``ApprovalRequest``).
Answer = Union[str, bool, Dict[str, Any]]
#: The answers the runtime takes (``approval/request``), as the protocol defines them.
APPROVAL_ANSWERS = ("allow_once", "allow_session", "allow_always", "reject")

#: Answers one approval: ``"allow_once"`` (or True) lets the call run; ``"allow_session"`` / ``"allow_always"``
#: let it run and keep the request's rule for the session / the workspace; anything else refuses it. May be async.
ApprovalCallback = Callable[[ApprovalRequest], Union[Answer, Awaitable[Answer]]]

#: Bytes of the runtime's stderr kept for error messages.
STDERR_TAIL_BYTES = 16_384
#: Longest line read from the runtime (one event can carry a large tool output).
MAX_LINE_BYTES = 64 * 1024 * 1024


class Harness:
    """A running dsh runtime. Use ``async with Harness(...) as h:`` (or ``await Harness(...).start()`` and
    ``await h.close()``), then ``s = await h.session()`` and ``r = await s.run("...")``.

    Options: ``command`` (argv of the runtime; default ``$DSH_BIN``, then ``dsh`` on PATH, then this
    checkout's launcher), ``cwd``, ``env`` (added to this process's), ``minimal`` (``--patch minimal``: exactly
    ``bash`` and ``str_replace_editor``), ``patches``, ``model`` (default model of new sessions; default
    ``$DSH_MODEL``), ``on_approval`` (without one, approvals are refused), ``stderr`` (``"pipe"`` keeps a tail
    for errors, ``"inherit"``, or a function), ``close_timeouts``.
    """

    def __init__(
        self,
        *,
        command: Optional[Sequence[str]] = None,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        minimal: bool = False,
        patches: Sequence[str] = (),
        model: Optional[str] = None,
        on_approval: Optional[ApprovalCallback] = None,
        stderr: Union[str, Callable[[str], None]] = "pipe",
        close_timeouts: CloseTimeouts = CloseTimeouts(),
        client_name: str = "dsh-python",
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self._env: Dict[str, str] = {**os.environ, **(env or {})}
        self._command = command
        self._cwd = cwd
        self._minimal = minimal
        self._patches = list(patches)
        self._model = model if model is not None else self._env.get("DSH_MODEL") or None
        self.on_approval = on_approval
        self._stderr = stderr
        self._close_timeouts = close_timeouts
        self._client_name = client_name
        self._max_line_bytes = max_line_bytes
        self._connection: Optional[Connection] = None
        self._sessions: Dict[str, Session] = {}
        self._closed: Optional[CloseResult] = None
        self.info: Optional[ServerInfo] = None

    async def __aenter__(self) -> "Harness":
        return await self.start()

    async def __aexit__(self, *_exc: Any) -> None:
        await self.close()

    async def start(self) -> "Harness":
        """Finds and launches the runtime, then initializes the protocol."""
        argv = find_runtime(self._command, self._env) + ["--profile", "sdk"]
        if self._minimal:
            argv += ["--patch", "minimal"]
        for patch in self._patches:
            argv += ["--patch", patch]
        self._connection = await Connection.spawn(
            argv,
            cwd=self._cwd,
            env=self._env,
            serve=self._serve,
            stderr=self._stderr,
            stderr_tail_bytes=STDERR_TAIL_BYTES,
            max_line_bytes=self._max_line_bytes,
        )
        try:
            reply = await self._connection.request(
                "initialize",
                # Always able to answer: a session or the harness may set a callback later; without one we refuse.
                {"protocolVersion": PROTOCOL_VERSION, "clientInfo": {"name": self._client_name}, "capabilities": {"approvals": True}},
            )
            if reply["protocolVersion"] != PROTOCOL_VERSION:
                raise DshError(PROTOCOL_MISMATCH, f"the dsh runtime speaks protocol {reply['protocolVersion']}, this SDK speaks {PROTOCOL_VERSION}")
            self.info = ServerInfo.from_wire(reply)
            self._connection.max_request_bytes = self.info.max_line_bytes
        except BaseException:
            await self.close()
            raise
        return self

    @property
    def pid(self) -> Optional[int]:
        """The runtime's process id."""
        return self._connection.process.pid if self._connection else None

    async def session(
        self,
        *,
        cwd: Optional[str] = None,
        model: Optional[str] = None,
        permission: Optional[str] = None,
        agent_preset: Optional[str] = None,
        plan_mode: bool = False,
        system_prompt: Optional[str] = None,
        mcp_servers: Optional[Dict[str, Dict[str, Any]]] = None,
        tools: Sequence[ClientTool] = (),
        allowed_tools: Optional[Sequence[str]] = None,
        disallowed_tools: Optional[Sequence[str]] = None,
        on_approval: Optional[ApprovalCallback] = None,
    ) -> Session:
        """Opens a new session. ``model``: ``provider/model`` or a bare model; an explicit one beats the default.
        ``mcp_servers``: stdio MCP servers by name (``{"command": ..., "args": [...], "env": {...}, "trust": "ask"}``).
        ``tools``: tools this program implements (a name the session already has is refused).
        ``allowed_tools`` / ``disallowed_tools``: only these / not these tools are offered and run (logged)."""
        params: Dict[str, Any] = {}
        route = model or self._model
        if cwd:
            params["cwd"] = cwd
        if route:
            params["route"] = route
        if permission:
            params["permission"] = permission
        if agent_preset:
            params["agentPreset"] = agent_preset
        if plan_mode:
            params["planMode"] = True
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if mcp_servers:
            params["mcpServers"] = mcp_servers
        if tools:
            params["tools"] = [tool.to_wire() for tool in tools]
        params.update(_tool_filter(allowed_tools, disallowed_tools))
        reply = await self.request("session/new", params)
        session = self._adopt(reply["sessionId"], on_approval)
        session.tools.update({tool.name: tool for tool in tools})
        return session

    async def resume(self, session_id: str, *, model: Optional[str] = None, on_approval: Optional[ApprovalCallback] = None) -> Session:
        """Continues a stored session (repaired if its runtime crashed)."""
        params: Dict[str, Any] = {"sessionId": session_id}
        if model:
            params["route"] = model
        reply = await self.request("session/resume", params)
        return self._adopt(reply["sessionId"], on_approval)

    async def fork(self, session_id: str, at_seq: int, *, model: Optional[str] = None) -> Session:
        """A new session holding events ``0..at_seq`` of another (a turn boundary)."""
        params: Dict[str, Any] = {"sessionId": session_id, "atSeq": at_seq}
        if model:
            params["route"] = model
        reply = await self.request("session/fork", params)
        return self._adopt(reply["sessionId"], None)

    async def list(self, cwd: Optional[str] = None) -> List[SessionSummary]:
        """Stored sessions, newest first (optionally only those started in ``cwd``)."""
        reply = await self.request("session/list", {"cwd": cwd} if cwd else {})
        return [SessionSummary.from_wire(raw) for raw in reply["sessions"]]

    async def search(self, query: str, *, cwd: Optional[str] = None, limit: Optional[int] = None) -> List[SearchHit]:
        """Full-text search of stored sessions (best hit per session, with the seq to open at and a marked snippet)."""
        params: Dict[str, Any] = {"query": query}
        if cwd is not None:
            params["cwd"] = cwd
        if limit is not None:
            params["limit"] = limit
        reply = await self.request("session/search", params)
        return list(reply["hits"])

    async def rename(self, session_id: str, title: str) -> str:
        """Names a session as its user chose (``session/rename``); a generated title never replaces it. Returns the title as logged."""
        reply = await self.request("session/rename", {"sessionId": session_id, "title": title})
        return str(reply["title"])

    async def delete(self, session_id: str) -> List[str]:
        """Deletes a stored session with its subagent children (``session/delete``); returns the ids deleted."""
        reply = await self.request("session/delete", {"sessionId": session_id})
        return list(reply["deleted"])

    async def events(self, session_id: str, *, from_seq: int = 0, limit: Optional[int] = None) -> EventsPage:
        """One page of a stored log."""
        params: Dict[str, Any] = {"sessionId": session_id, "fromSeq": from_seq}
        if limit is not None:
            params["limit"] = limit
        reply = await self.request("session/events", params)
        return EventsPage([Event.from_wire(raw) for raw in reply["events"]], reply["nextSeq"], reply["length"])

    async def view(self, session_id: str, *, from_seq: Optional[int] = None) -> SessionViewResult:
        """What a session shows (open or stored), folded by the runtime with the display fold every surface
        shares (``session/view``): ``items``, ``todos``, ``length``. ``from_seq``: only the items created from there on."""
        params: Dict[str, Any] = {"sessionId": session_id}
        if from_seq is not None:
            params["fromSeq"] = from_seq
        reply: SessionViewResult = await self.request("session/view", params)
        return reply

    async def request(self, method: str, params: Dict[str, Any]) -> Any:
        """Sends any protocol request (the methods above cover them all)."""
        if self._connection is None:
            raise DshError(CLOSED, f"cannot send {method}: the harness was not started")
        if self._closed is not None:
            raise DshError(CLOSED, f"cannot send {method}: the harness is closed")
        return await self._connection.request(method, params)

    async def close(self) -> CloseResult:
        """Ends the runtime: ``shutdown`` (turns cancelled, logs flushed), then EOF, SIGTERM, SIGKILL as needed."""
        if self._closed is not None:
            return self._closed
        connection = self._connection
        if connection is None:
            self._closed = CloseResult("already-exited")
            return self._closed

        def shutdown() -> None:
            future = asyncio.ensure_future(connection.request("shutdown", {}))
            future.add_done_callback(lambda done: done.cancelled() or done.exception())

        self._closed = await connection.close(shutdown, self._close_timeouts)
        connection.fail(DshError(CLOSED, "the harness was closed"))
        await connection.wait_reader()
        return self._closed

    def _listen(self, listener: Listener) -> Any:
        assert self._connection is not None
        return self._connection.listen(listener)

    def _adopt(self, session_id: str, on_approval: Optional[ApprovalCallback]) -> Session:
        session = self._sessions.get(session_id) or Session(self, session_id)
        if on_approval is not None:
            session.on_approval = on_approval
        self._sessions[session_id] = session
        return session

    async def _serve(self, method: str, params: Dict[str, Any]) -> Any:
        if method == "tool/call":
            return await self._call_tool(ToolCall.from_wire(params))  # type: ignore[arg-type]
        request = ApprovalRequest.from_wire(params)
        session = self._sessions.get(request.session_id)
        callback = (session.on_approval if session else None) or self.on_approval
        if callback is None:
            raise RuntimeError("no on_approval callback is set in the SDK, so the call is refused")
        answer = callback(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is True:
            return {"answer": "allow_once"}
        if isinstance(answer, dict):
            return dict(answer)  # the runtime checks it against the protocol (a malformed one refuses)
        return {"answer": answer if answer in APPROVAL_ANSWERS else "reject"}

    async def _call_tool(self, call: ToolCall) -> Dict[str, Any]:
        """A client tool's call: the session's handler answers; a raise becomes an error reply (TOOL_FAILED in the log)."""
        session = self._sessions.get(call.session_id)
        tool = session.tools.get(call.tool) if session else None
        if tool is None:
            raise RuntimeError(f"this program registered no tool {call.tool!r} for session {call.session_id}")
        result = tool.handler(call.arguments, call)
        if inspect.isawaitable(result):
            result = await result
        return {"content": result} if isinstance(result, str) else dict(result)


def _tool_filter(allowed: Optional[Sequence[str]], disallowed: Optional[Sequence[str]]) -> Dict[str, List[str]]:
    params: Dict[str, List[str]] = {}
    if allowed is not None:
        params["allowedTools"] = list(allowed)
    if disallowed is not None:
        params["disallowedTools"] = list(disallowed)
    return params
