"""The runtime process and the client end of its protocol (newline-delimited JSON-RPC 2.0 on stdio)."""
from __future__ import annotations

import asyncio
import json
import signal
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Set

from .errors import REQUEST_FAILED, REQUEST_TOO_LARGE, RUNTIME_EXITED, RUNTIME_NOT_FOUND, DshError
from .protocol import INTERNAL_ERROR, METHOD_NOT_FOUND
from .types import CloseResult, CloseTimeouts

# INTERNAL_ERROR and METHOD_NOT_FOUND (generated from the protocol declarations) are what the client sends
# back to a request of the runtime it cannot serve.

#: The pseudo-notification listeners receive when the connection ends (params: ``{"error": DshError}``).
CLOSED_NOTIFICATION = "$closed"

Listener = Callable[[str, Dict[str, Any]], None]
ServeRequest = Callable[[str, Dict[str, Any]], Awaitable[Any]]


class Connection:
    """Owns the child process: reads its stdout line by line, pairs replies with requests, hands notifications
    to listeners, serves the runtime's requests, keeps the tail of its stderr, and closes it by escalation."""

    def __init__(self, process: asyncio.subprocess.Process, serve: ServeRequest, stderr_tail_bytes: int, on_stderr: Optional[Callable[[str], None]]) -> None:
        self.process = process
        self._serve = serve
        self._next_id = 1
        self._pending: Dict[int, "asyncio.Future[Any]"] = {}
        self._listeners: Set[Listener] = set()
        self._tail = b""
        self._tail_bytes = stderr_tail_bytes
        self._on_stderr = on_stderr
        self.closed: Optional[DshError] = None
        #: The runtime's line limit, from ``initialize``: a longer request is refused here, since the runtime
        #: would drop it unread and could not say which request it was (it would wait forever).
        self.max_request_bytes: Optional[int] = None
        self._tasks: List["asyncio.Task[None]"] = [asyncio.ensure_future(self._read_stdout())]
        if process.stderr is not None:
            self._tasks.append(asyncio.ensure_future(self._read_stderr()))

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: Optional[str],
        env: Mapping[str, str],
        serve: ServeRequest,
        stderr: Any,
        stderr_tail_bytes: int,
        max_line_bytes: int,
    ) -> "Connection":
        inherit = stderr == "inherit"
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=dict(env),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=None if inherit else asyncio.subprocess.PIPE,
                limit=max_line_bytes,
            )
        except (FileNotFoundError, PermissionError) as error:
            raise DshError(RUNTIME_NOT_FOUND, f'cannot start the dsh runtime "{argv[0]}": {error.strerror}') from error
        return cls(process, serve, stderr_tail_bytes, stderr if callable(stderr) else None)

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def stderr_tail(self) -> str:
        return self._tail.decode("utf-8", "replace").strip()

    def describe_exit(self) -> str:
        code = self.process.returncode
        how = "is still running" if code is None else f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = self.stderr_tail()
        return f"the dsh runtime {how}" + (f"; its stderr ends with:\n{tail}" if tail else "")

    async def request(self, method: str, params: Dict[str, Any]) -> Any:
        if self.closed is not None:
            raise self.closed
        request_id = self._next_id
        self._next_id += 1
        line = _encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if self.max_request_bytes is not None and len(line) - 1 > self.max_request_bytes:
            raise DshError(REQUEST_TOO_LARGE, f"{method}: the request is {len(line) - 1} bytes, over the {self.max_request_bytes}-byte line limit of the runtime; it was not sent")
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write_line(line)
        return await future

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Listens to every notification; returns the function that stops listening."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)

    def fail(self, error: DshError) -> None:
        if self.closed is not None:
            return
        self.closed = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        for listener in list(self._listeners):
            listener(CLOSED_NOTIFICATION, {"error": error})

    async def close(self, shutdown: Callable[[], None], timeouts: CloseTimeouts) -> CloseResult:
        """Shutdown request, then EOF, then SIGTERM, then SIGKILL, each after the one before timed out."""
        if not self.running:
            return CloseResult("already-exited", self.process.returncode)
        steps = [("shutdown", shutdown, timeouts.shutdown), ("eof", self._end_stdin, timeouts.eof), ("sigterm", lambda: self._signal(signal.SIGTERM), timeouts.term)]
        for stage, act, seconds in steps:
            act()
            try:
                await asyncio.wait_for(asyncio.shield(self.process.wait()), seconds)
                return CloseResult(stage, self.process.returncode)
            except asyncio.TimeoutError:
                continue
        self._signal(signal.SIGKILL)
        await self.process.wait()
        return CloseResult("sigkill", self.process.returncode)

    async def wait_reader(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _write(self, message: Dict[str, Any]) -> None:
        self._write_line(_encode(message))

    def _write_line(self, line: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing() or not self.running:
            return
        stdin.write(line)

    def _end_stdin(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()

    def _signal(self, which: int) -> None:
        if self.running:
            try:
                self.process.send_signal(which)
            except ProcessLookupError:
                pass

    async def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        try:
            while True:
                line = await self.process.stdout.readline()
                if not line:
                    break
                if line.strip():
                    self._receive(line)
        except (ValueError, asyncio.LimitOverrunError) as error:
            # A line longer than max_line_bytes: the stream cannot be resynchronized, so the connection ends.
            self._signal(signal.SIGTERM)
            self.fail(DshError(RUNTIME_EXITED, f"a line from the runtime exceeded max_line_bytes: {error}"))
        await self.process.wait()
        self.fail(DshError(RUNTIME_EXITED, self.describe_exit()))

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while True:
            chunk = await self.process.stderr.read(4096)
            if not chunk:
                return
            self._tail = (self._tail + chunk)[-self._tail_bytes :]
            if self._on_stderr is not None:
                self._on_stderr(chunk.decode("utf-8", "replace"))

    def _receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return  # the runtime writes protocol only; a stray line is not ours to interpret
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            asyncio.ensure_future(self._answer(message["id"], method, message.get("params") or {}))
        elif isinstance(method, str):
            for listener in list(self._listeners):
                listener(method, message.get("params") or {})
        else:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is None or future.done():
                return
            error = message.get("error")
            if error is not None:
                data = error.get("data") or {}
                code = f" {data['code']}" if data.get("code") else ""
                future.set_exception(DshError(REQUEST_FAILED, f"request failed ({error.get('code')}{code}): {error.get('message')}", error))
            else:
                future.set_result(message.get("result"))

    async def _answer(self, request_id: Any, method: str, params: Dict[str, Any]) -> None:
        try:
            if method not in ("approval/request", "tool/call"):
                raise _Unserved(f'the SDK does not serve "{method}"')
            reply: Dict[str, Any] = {"result": await self._serve(method, params)}
        except _Unserved as error:
            reply = {"error": {"code": METHOD_NOT_FOUND, "message": str(error)}}
        except Exception as error:  # the callback's failure is the client's answer: a rejection (a tool: TOOL_FAILED)
            reply = {"error": {"code": INTERNAL_ERROR, "message": str(error) or type(error).__name__}}
        self._write({"jsonrpc": "2.0", "id": request_id, **reply})


class _Unserved(Exception):
    pass


def _encode(message: Dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"
