"""One session of the runtime: prompts, streamed events, cancel, model and permission switches."""
from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Dict, List, Optional, Sequence, Union

from .errors import DshError
from .protocol import Item, SessionViewResult
from .types import ClientTool, CommandResult, Event, RunResult

if TYPE_CHECKING:
    from .harness import ApprovalCallback, Harness

#: What a prompt may carry: plain text, or text and image blocks as the protocol spells them.
Prompt = Union[str, List[Dict[str, Any]]]

_IDLE = object()


class Session:
    """A session of the runtime. Runs on one Session are serialized: each waits for the one before."""

    def __init__(self, harness: "Harness", session_id: str) -> None:
        self._harness = harness
        self.id = session_id
        #: Answers approvals of this session (instead of the harness's callback).
        self.on_approval: Optional["ApprovalCallback"] = None
        #: The tools this program registered for the session, by name.
        self.tools: Dict[str, ClientTool] = {}
        self._lock = asyncio.Lock()
        #: The stream last handed out: a caller that left it early is closed before the next run starts.
        self._open_stream: Optional[AsyncIterator[Event]] = None

    async def run(
        self,
        prompt: Prompt,
        *,
        max_steps: Optional[int] = None,
        allowed_tools: Optional[Sequence[str]] = None,
        disallowed_tools: Optional[Sequence[str]] = None,
    ) -> RunResult:
        """Sends a prompt; returns once the session is idle again, with the final text, the events and the reason.
        ``max_steps``: model requests this run's turn may take (in place of the runtime's ``agent.maxSteps``).
        ``allowed_tools`` / ``disallowed_tools``: from this run on, only these / not these tools (a logged filter)."""
        started = time.monotonic()
        events: List[Event] = []
        receipt: Dict[str, str] = {}
        await self._close_open_stream()
        options = _prompt_options(max_steps, allowed_tools, disallowed_tools)
        async for event in self._turn(self._send_prompt(prompt, options), receipt):
            events.append(event)
        return await self._summarize(receipt.get("messageId", ""), events, (time.monotonic() - started) * 1000)

    async def command(self, line: str) -> CommandResult:
        """Runs a slash command as a user types it (``/fix-issue 123``). A user command's expanded prompt runs
        as a turn (``run``); an unknown ``/word`` runs and sends nothing (``unknown`` names it)."""
        started = time.monotonic()
        events: List[Event] = []
        receipt: Dict[str, Any] = {}
        await self._close_open_stream()

        async def send() -> Optional[str]:
            reply = await self._harness.request("session/command", {"sessionId": self.id, "line": line})
            receipt["reply"] = reply
            return reply.get("messageId")

        async for event in self._turn(send(), receipt):
            events.append(event)
        reply = receipt["reply"]
        run = await self._summarize(receipt["messageId"], events, (time.monotonic() - started) * 1000) if receipt.get("messageId") else None
        return CommandResult(
            handled=reply["handled"],
            name=reply.get("name"),
            output=reply.get("output"),
            unknown=reply.get("unknown"),
            error=reply.get("error"),
            new_session_id=reply.get("newSessionId"),
            run=run,
        )

    async def _summarize(self, message_id: str, events: List[Event], duration_ms: float) -> RunResult:
        """The run's items, text and reason as the display fold every surface shares shows them
        (``session/view``, @dsh/session-view); usage and cost as the runtime folds the log (``session/usage``,
        the numbers of ``dsh usage``): this client folds nothing its own way."""
        usage: Dict[str, Any] = {"requests": 0, "input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 0, "cacheHitShare": None, "cost": 0, "cacheSaved": 0, "unpriced": []}
        items: List[Item] = []
        if events:
            usage = dict(await self._harness.request("session/usage", {"sessionId": self.id, "fromSeq": events[0].seq}))
            items = (await self.view(from_seq=events[0].seq))["items"]
        cost = usage.pop("cost")
        cache_saved = usage.pop("cacheSaved", None)
        unpriced = list(usage.pop("unpriced"))
        return _outcome(self.id, message_id, events, items, duration_ms, usage, cost, unpriced, cache_saved)

    async def view(self, from_seq: Optional[int] = None) -> SessionViewResult:
        """What this session shows, folded by the runtime (``session/view``, the fold web, ACP, headless and the
        TypeScript SDK use): ``items`` (``protocol.Item``: user, assistant, tool cards with approvals and edits,
        notices, turn ends, subagents), ``todos``, ``length``. ``from_seq``: only the items created from there on."""
        return await self._harness.view(self.id, from_seq=from_seq)

    async def commands(self) -> List[Dict[str, Any]]:
        """The slash commands of this session's workspace: ``name``, ``description``, ``argumentHint``, ``origin``."""
        reply = await self._harness.request("session/commands", {"sessionId": self.id})
        return list(reply["commands"])

    async def changes(self, from_turn: Optional[int] = None) -> Dict[str, Any]:
        """The files this session changed, each with its diff (``files``: ``path``, ``status``, ``patch``, …),
        against the state before turn ``from_turn`` (default: before the session)."""
        params: Dict[str, Any] = {"sessionId": self.id}
        if from_turn is not None:
            params["fromTurn"] = from_turn
        return dict(await self._harness.request("session/changes", params))

    async def rewind(self, to_turn: int, force: bool = False, fork: bool = False) -> Dict[str, Any]:
        """Restores every file this session touched to its state before turn ``to_turn``; a file changed since
        by someone else is listed in ``conflicts`` and left alone unless ``force``. ``fork`` also forks the
        conversation there (``forkedTo``)."""
        params: Dict[str, Any] = {"sessionId": self.id, "toTurn": to_turn}
        if force:
            params["force"] = True
        if fork:
            params["fork"] = True
        return dict(await self._harness.request("session/rewind", params))

    async def stream(
        self,
        prompt: Prompt,
        *,
        max_steps: Optional[int] = None,
        allowed_tools: Optional[Sequence[str]] = None,
        disallowed_tools: Optional[Sequence[str]] = None,
    ) -> AsyncIterator[Event]:
        """Sends a prompt and yields each committed event as it arrives, until the session is idle again.
        Leaving the loop early (``break``) cancels the turn: the session's next run (or ``aclose()``) waits
        until it has ended, so none of its events reach that run."""
        await self._close_open_stream()
        turn = self._turn(self._send_prompt(prompt, _prompt_options(max_steps, allowed_tools, disallowed_tools)), {})
        self._open_stream = turn
        async for event in turn:
            yield event

    async def _close_open_stream(self) -> None:
        stream, self._open_stream = self._open_stream, None
        if stream is not None:
            await stream.aclose()  # type: ignore[attr-defined]

    async def cancel(self) -> bool:
        """Cancels the running turn; returns whether one was running."""
        reply = await self._harness.request("session/cancel", {"sessionId": self.id})
        return bool(reply["wasRunning"])

    async def set_model(self, model: str) -> Dict[str, Any]:
        """Switches the model from the next request on (``provider/model`` or a bare model of the same provider)."""
        reply = await self._harness.request("session/setModel", {"sessionId": self.id, "route": model})
        return reply["route"]

    async def set_permission(self, preset: str) -> None:
        await self._harness.request("session/setPermission", {"sessionId": self.id, "preset": preset})

    async def set_plan_mode(self, active: bool) -> bool:
        """Enters (True) or leaves (False) plan mode, as the program's user; returns whether the session is in it."""
        reply = await self._harness.request("session/setPlanMode", {"sessionId": self.id, "active": active})
        return bool(reply["active"])

    async def events(self) -> List[Event]:
        """The whole stored log, read page by page."""
        events: List[Event] = []
        from_seq: Optional[int] = 0
        while from_seq is not None:
            page = await self._harness.events(self.id, from_seq=from_seq)
            events.extend(page.events)
            from_seq = page.next_seq
        return events

    async def fork(self, at_seq: int) -> "Session":
        return await self._harness.fork(self.id, at_seq)

    async def _send_prompt(self, prompt: Prompt, options: Dict[str, Any]) -> Optional[str]:
        reply = await self._harness.request("session/prompt", {"sessionId": self.id, "content": prompt, **options})
        return reply["messageId"]

    async def _turn(self, send: Awaitable[Optional[str]], receipt: Dict[str, Any]) -> AsyncIterator[Event]:
        """Sends (``send`` gives the receipt, or None when nothing was queued) and yields the run's events."""
        async with self._lock:
            queue: "asyncio.Queue[Any]" = asyncio.Queue()
            # `idle` ends the run only once a turn started after we subscribed: an earlier turn's idle is not ours.
            started = False

            def on_message(method: str, params: Dict[str, Any]) -> None:
                nonlocal started
                if method == "$closed":
                    queue.put_nowait(params["error"])
                elif params.get("sessionId") != self.id:
                    return
                elif method == "session.event":
                    event = Event.from_wire(params["event"])
                    started = started or event.type == "turn/start"
                    queue.put_nowait(event)
                elif method == "session.status" and params.get("status") == "idle" and started:
                    queue.put_nowait(_IDLE)

            stop = self._harness._listen(on_message)
            try:
                message_id = await send
                if message_id is None:
                    return
                receipt["messageId"] = message_id
                while True:
                    item = await queue.get()
                    if item is _IDLE:
                        return
                    if isinstance(item, DshError):
                        raise item
                    yield item
            except asyncio.CancelledError:
                # The caller gave up on the run: the turn should not go on without anyone reading it.
                asyncio.ensure_future(self._cancel_quietly())
                raise
            except GeneratorExit:
                # The caller left the stream early: cancel the turn and wait for its end, still holding the
                # lock, so its remaining events are not taken for the next run's.
                await self._cancel_quietly()
                while True:
                    item = await queue.get()
                    if item is _IDLE or isinstance(item, DshError):
                        break
                raise
            finally:
                stop()

    async def _cancel_quietly(self) -> None:
        try:
            await self.cancel()
        except DshError:
            pass


def _prompt_options(max_steps: Optional[int], allowed: Optional[Sequence[str]], disallowed: Optional[Sequence[str]]) -> Dict[str, Any]:
    options: Dict[str, Any] = {}
    if max_steps is not None:
        options["maxSteps"] = max_steps
    if allowed is not None:
        options["allowedTools"] = list(allowed)
    if disallowed is not None:
        options["disallowedTools"] = list(disallowed)
    return options


def _outcome(
    session_id: str,
    message_id: str,
    events: List[Event],
    items: List[Item],
    duration_ms: float,
    usage: Dict[str, Any],
    cost: Optional[float],
    unpriced: List[str],
    cache_saved: Optional[float] = 0,
) -> RunResult:
    """The last text an assistant item shows and the last turn end, read from the run's items as the TypeScript SDK reads them."""
    text = ""
    end: Optional[Dict[str, Any]] = None
    for item in reversed(items):
        if item["kind"] == "assistant" and not text:
            text = item["text"]
        elif item["kind"] == "turn-end" and end is None:
            end = dict(item)
        if text and end is not None:
            break
    reason = end["reason"] if end else "interrupted"
    error = end.get("loggedError") if end else None
    return RunResult(
        session_id=session_id,
        message_id=message_id,
        text=text,
        reason=reason,
        events=events,
        items=items,
        error=error,
        usage=usage,
        cost=cost,
        cache_saved=cache_saved,
        unpriced=unpriced,
        duration_ms=round(duration_ms),
    )
