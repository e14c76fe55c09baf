"""A small synchronous wrapper: the asyncio harness on its own event loop thread."""
from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any, Coroutine, Dict, Iterator, List, Optional, TypeVar

from .harness import Harness
from .protocol import SearchHit, SessionViewResult
from .session import Prompt, Session
from .types import CloseResult, CommandResult, Event, EventsPage, RunResult, ServerInfo, SessionSummary

T = TypeVar("T")
_DONE = object()


class _Loop:
    """An event loop running in a daemon thread; coroutines are submitted and waited for."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="dsh-sdk-loop", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class SyncSession:
    """Blocking calls on one session (see ``Session``)."""

    def __init__(self, loop: _Loop, session: Session) -> None:
        self._loop = loop
        self._session = session
        self.id = session.id

    def run(self, prompt: Prompt, **options: Any) -> RunResult:
        """See ``Session.run`` (``max_steps``, ``allowed_tools``, ``disallowed_tools``)."""
        return self._loop.run(self._session.run(prompt, **options))

    def stream(self, prompt: Prompt, **options: Any) -> Iterator[Event]:
        """Yields events as they arrive. Leaving early detaches: the turn runs to its end in the background and
        the session's next run waits for it, so none of its events reach that run."""
        items: "queue.Queue[Any]" = queue.Queue()

        async def pump() -> None:
            try:
                async for event in self._session.stream(prompt, **options):
                    items.put(event)
                items.put(_DONE)
            except BaseException as error:  # handed to the reading thread, which raises it
                items.put(error)

        asyncio.run_coroutine_threadsafe(pump(), self._loop.loop)
        while True:
            item = items.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def command(self, line: str) -> CommandResult:
        return self._loop.run(self._session.command(line))

    def commands(self) -> List[Dict[str, Any]]:
        return self._loop.run(self._session.commands())

    def changes(self, from_turn: Optional[int] = None) -> Dict[str, Any]:
        return self._loop.run(self._session.changes(from_turn))

    def rewind(self, to_turn: int, force: bool = False, fork: bool = False) -> Dict[str, Any]:
        return self._loop.run(self._session.rewind(to_turn, force=force, fork=fork))

    def cancel(self) -> bool:
        return self._loop.run(self._session.cancel())

    def set_model(self, model: str) -> Any:
        return self._loop.run(self._session.set_model(model))

    def set_permission(self, preset: str) -> None:
        self._loop.run(self._session.set_permission(preset))

    def set_plan_mode(self, active: bool) -> bool:
        return self._loop.run(self._session.set_plan_mode(active))

    def events(self) -> List[Event]:
        return self._loop.run(self._session.events())

    def view(self, from_seq: Optional[int] = None) -> SessionViewResult:
        return self._loop.run(self._session.view(from_seq))

    def fork(self, at_seq: int) -> "SyncSession":
        """A new session holding this one's events up to ``at_seq`` (a turn boundary)."""
        return SyncSession(self._loop, self._loop.run(self._session.fork(at_seq)))


class SyncHarness:
    """``with SyncHarness(...) as h: s = h.session(); r = s.run("...")`` — the same options as ``Harness``.
    Approval callbacks and client tools' handlers run on the harness's loop thread."""

    def __init__(self, **options: Any) -> None:
        self._loop = _Loop()
        try:
            self._harness = self._loop.run(Harness(**options).start())
        except BaseException:
            self._loop.stop()
            raise
        self.info: Optional[ServerInfo] = self._harness.info

    def __enter__(self) -> "SyncHarness":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def session(self, **options: Any) -> SyncSession:
        return SyncSession(self._loop, self._loop.run(self._harness.session(**options)))

    def resume(self, session_id: str, **options: Any) -> SyncSession:
        return SyncSession(self._loop, self._loop.run(self._harness.resume(session_id, **options)))

    def fork(self, session_id: str, at_seq: int, **options: Any) -> SyncSession:
        return SyncSession(self._loop, self._loop.run(self._harness.fork(session_id, at_seq, **options)))

    def events(self, session_id: str, *, from_seq: int = 0, limit: Optional[int] = None) -> EventsPage:
        """One page of a stored log."""
        return self._loop.run(self._harness.events(session_id, from_seq=from_seq, limit=limit))

    def view(self, session_id: str, *, from_seq: Optional[int] = None) -> SessionViewResult:
        return self._loop.run(self._harness.view(session_id, from_seq=from_seq))

    def request(self, method: str, params: Dict[str, Any]) -> Any:
        """Sends any protocol request."""
        return self._loop.run(self._harness.request(method, params))

    def list(self, cwd: Optional[str] = None) -> List[SessionSummary]:
        return self._loop.run(self._harness.list(cwd))

    def search(self, query: str, *, cwd: Optional[str] = None, limit: Optional[int] = None) -> List[SearchHit]:
        return self._loop.run(self._harness.search(query, cwd=cwd, limit=limit))

    def rename(self, session_id: str, title: str) -> str:
        return self._loop.run(self._harness.rename(session_id, title))

    def delete(self, session_id: str) -> List[str]:
        return self._loop.run(self._harness.delete(session_id))

    def close(self) -> CloseResult:
        if self._loop.loop.is_closed():
            return CloseResult("already-exited")
        try:
            return self._loop.run(self._harness.close())
        finally:
            self._loop.stop()
