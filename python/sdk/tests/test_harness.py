"""The asyncio SDK driving the real runtime with the real DeepSeek adapter against the mock model server."""
from __future__ import annotations

import asyncio
import os
import shutil
import signal
import unittest
from typing import Any, Dict, List

from dsh import REQUEST_FAILED, REQUEST_TOO_LARGE, RUNTIME_EXITED, ApprovalRequest, DshError, RunResult

from .support import REPO, SharedAsyncRuntimeTest, TempDirs


class HarnessTest(SharedAsyncRuntimeTest):
    """The shared runtime for what a session does; a runtime of the test's own where the runtime's start options,
    its death or its close are the subject."""

    async def test_a_text_run_returns_the_final_text_the_events_and_the_reason(self) -> None:
        self.llm.enqueue({"text": "Hello from the mock model."})
        harness = self.harness
        self.assertIn("deepseek", [provider.provider for provider in harness.info.providers])
        session = await harness.session()
        result = await session.run("say hello")
        self.assertIsInstance(result, RunResult)
        self.assertEqual((result.text, result.reason, result.session_id), ("Hello from the mock model.", "completed", session.id))
        self.assertEqual(result.events[0].type, "turn/start")
        self.assertEqual(result.events[-1].type, "turn/end")
        self.assertEqual(self.llm.requests()[0]["body"]["messages"][-1], {"role": "user", "content": "say hello"})

    async def test_an_agent_preset_and_plan_mode_are_chosen_at_session_creation(self) -> None:
        self.llm.enqueue({"text": "looked"})
        harness = self.harness
        session = await harness.session(agent_preset="explore", plan_mode=True)
        await session.run("look")
        tools = [tool["function"]["name"] for tool in self.llm.requests()[0]["body"]["tools"]]
        self.assertIn("read", tools)
        self.assertNotIn("bash", tools)
        self.assertNotIn("write", tools)
        kinds = {event.type: event.data for event in await session.events()}
        self.assertEqual((kinds["agent/preset"]["name"], kinds["agent/preset"]["actor"]), ("explore", "client:sdk"))
        self.assertTrue(kinds["plan/mode"]["active"])
        self.assertFalse(await session.set_plan_mode(False))

    async def test_a_result_carries_the_logged_usage_and_the_duration(self) -> None:
        self.llm.enqueue({"text": "counted", "usage": {"input": 120, "cacheRead": 360, "output": 7}})
        harness = self.harness
        result = await (await harness.session()).run("count me")
        self.assertEqual(result.usage, {"requests": 1, "input": 120, "cacheRead": 360, "cacheWrite": 0, "output": 7, "cacheHitShare": 0.75})
        self.assertIsNotNone(result.cache_saved)
        self.assertGreater(result.cache_saved, 0)
        # The runtime prices the run with its table (here the shipped price of the default model).
        self.assertEqual(result.unpriced, [])
        self.assertIsNotNone(result.cost)
        self.assertGreater(result.cost, 0)
        self.assertGreater(result.duration_ms, 0)

    async def test_a_request_over_the_line_limit_fails_at_once_and_the_harness_goes_on(self) -> None:
        harness = self.harness
        self.assertEqual(harness.info.max_line_bytes, 16 * 1024 * 1024)
        session = await harness.session()
        with self.assertRaises(DshError) as caught:
            await asyncio.wait_for(session.run("x" * (20 * 1024 * 1024)), 10)
        self.assertEqual(caught.exception.code, REQUEST_TOO_LARGE)
        self.assertEqual(self.llm.requests(), [])
        self.llm.enqueue({"text": "still here"})
        self.assertEqual((await session.run("small")).text, "still here")

    async def test_leaving_a_stream_early_cancels_the_turn_and_nothing_leaks_into_the_next_run(self) -> None:
        harness = self.harness
        session = await harness.session()
        self.llm.enqueue({"text": "a slow answer that nobody waits for", "chunkDelayMs": 200})
        async for event in session.stream("start something slow"):
            if event.type == "assistant/chunk":
                break
        self.llm.enqueue({"text": "the next answer"})
        following = await asyncio.wait_for(session.run("next"), 30)
        self.assertEqual(following.text, "the next answer")
        self.assertEqual([event.type for event in following.events if event.type == "turn/start"], ["turn/start"])
        self.assertEqual(following.events[0].type, "turn/start")
        ends = [event.data["reason"] for event in await session.events() if event.type == "turn/end"]
        self.assertEqual(ends, ["aborted", "completed"])

    async def test_search_finds_a_word_of_an_earlier_session_with_the_seq_to_open_at(self) -> None:
        self.llm.enqueue({"text": "The quokkalith module is retired."})
        harness = self.harness
        session = await harness.session()
        await session.run("what happened to the module?")
        hits = await harness.search("quokkalith")
        self.assertEqual([hit["sessionId"] for hit in hits], [session.id])
        self.assertIn("quokkalith", hits[0]["snippet"]["text"])
        self.assertEqual((await session.events())[hits[0]["seq"]].type, "assistant/message")
        self.assertEqual(await harness.search("nothing-like-this-anywhere"), [])

    async def test_rename_is_the_users_title_and_delete_leaves_no_log(self) -> None:
        self.llm.enqueue({"text": "noted"})
        harness = self.harness
        # A folder of its own: the shared runtime's other sessions are not listed there.
        folder = os.path.join(self.dirs.workspace, "rename")
        os.makedirs(folder)
        session = await harness.session(cwd=folder)
        await session.run("remember the wombatite")
        self.assertEqual(await harness.rename(session.id, "  My\nwombat  "), "My wombat")
        listed = [summary for summary in await harness.list(folder) if summary.id == session.id]
        self.assertEqual(listed[0].title, "My wombat")
        self.assertEqual(await harness.delete(session.id), [session.id])
        self.assertEqual([summary.id for summary in await harness.list(folder)], [])
        self.assertNotIn(session.id, [summary.id for summary in await harness.list()])
        self.assertEqual(await harness.search("wombatite"), [])
        with self.assertRaises(DshError) as refused:
            await harness.delete("../../etc")
        self.assertEqual(refused.exception.code, REQUEST_FAILED)
        self.assertEqual((refused.exception.rpc or {})["data"]["code"], "INVALID_ID")

    async def test_a_tool_using_run_edits_a_file_in_the_minimal_composition(self) -> None:
        dirs = TempDirs()
        self.addCleanup(dirs.cleanup)
        path = os.path.join(dirs.workspace, "greeting.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("hello world\n")
        self.llm.enqueue(
            {"toolCalls": [{"name": "str_replace_editor", "arguments": {"command": "str_replace", "path": "greeting.txt", "old_str": "world", "new_str": "python"}}]},
            {"text": "Edited."},
        )
        harness = await self.start(dirs, minimal=True)
        result = await (await harness.session()).run("greet python instead")
        self.assertEqual((result.text, result.reason), ("Edited.", "completed"))
        with open(path, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "hello python\n")
        self.assertEqual([event.data.get("error") for event in result.events if event.type == "tool/result"], [None])

    async def test_stream_yields_events_while_the_model_is_still_answering(self) -> None:
        self.llm.enqueue({"text": ["one ", "two ", "three ", "four"], "chunkDelayMs": 60})
        session = await self.harness.session()
        types: List[str] = []
        open_at_first_chunk = None
        async for event in session.stream("count"):
            if event.type == "assistant/chunk" and open_at_first_chunk is None:
                open_at_first_chunk = "endedAt" not in self.llm.requests()[0]["timing"]
            types.append(event.type)
        self.assertIs(open_at_first_chunk, True)
        self.assertEqual(types.count("assistant/chunk"), 4)
        self.assertEqual(types[-1], "turn/end")

    async def test_on_approval_answers_the_approval_and_the_call_runs(self) -> None:
        self.llm.enqueue({"toolCalls": [{"id": "w", "name": "write_file", "arguments": {"path": "protected/ok.txt", "text": "allowed"}}]}, {"text": "written"})
        asked: List[ApprovalRequest] = []

        async def approve(request: ApprovalRequest) -> str:
            asked.append(request)
            return "allow_once"

        # The harness-wide callback (the shared runtime runs the fixture tools).
        harness = self.harness
        harness.on_approval = approve
        session = await harness.session()
        result = await session.run("write it")
        self.assertEqual([(r.session_id, r.tool, r.summary, r.call_id) for r in asked], [(session.id, "write_file", "write protected/ok.txt", "w")])
        with open(os.path.join(self.dirs.workspace, "protected/ok.txt"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "allowed")
        decided = [event.data for event in result.events if event.type == "approval/decided"]
        self.assertEqual([(d["answer"], d["by"], d["actor"]) for d in decided], [("allow_once", "user", "client:sdk")])

    async def test_an_mcp_server_passed_as_mcp_servers_serves_a_tool_the_model_calls(self) -> None:
        server = os.path.join(REPO, "packages", "mcp", "mcp-client", "src", "fixtures", "test-server.mjs")
        self.llm.enqueue({"toolCalls": [{"id": "m", "name": "mcp__py__echo", "arguments": {"text": "from python"}}]}, {"text": "done"})
        harness = self.harness
        session = await harness.session(mcp_servers={"py": {"command": shutil.which("node"), "args": [server], "trust": "allow"}})
        result = await session.run("use the server")
        results = [event.data for event in result.events if event.type == "tool/result"]
        self.assertEqual([r["content"][0]["text"] for r in results], ["echo: from python"])
        self.assertIn("mcp__py__echo", [tool["function"]["name"] for tool in self.llm.requests()[0]["body"]["tools"]])

    async def test_allow_session_keeps_the_offered_rule_and_the_same_command_is_not_asked_again(self) -> None:
        def touch(call_id: str) -> Dict[str, Any]:
            return {"toolCalls": [{"id": call_id, "name": "bash", "arguments": {"command": f"touch {call_id}.txt", "sandbox": False, "justification": "the test needs it"}}]}

        self.llm.enqueue(touch("t1"), touch("t2"), {"text": "done"})
        asked: List[ApprovalRequest] = []

        def approve(request: ApprovalRequest) -> str:
            asked.append(request)
            return "allow_session"

        harness = self.harness
        harness.on_approval = approve
        session = await harness.session()
        result = await session.run("touch two files")
        self.assertEqual([(r.call_id, r.rule) for r in asked], [("t1", "unconfined(touch *)")])
        for name in ("t1.txt", "t2.txt"):
            self.assertTrue(os.path.exists(os.path.join(self.dirs.workspace, name)))
        grants = [event.data for event in result.events if event.type == "grant/added"]
        self.assertEqual([(g["rule"], g["scope"], g["actor"]) for g in grants], [("unconfined(touch *)", "session", "client:sdk")])

    async def test_a_rejecting_callback_refuses_the_call_and_the_file_is_absent(self) -> None:
        self.llm.enqueue({"toolCalls": [{"id": "w", "name": "write_file", "arguments": {"path": "protected/no.txt", "text": "x"}}]}, {"text": "refused"})
        harness = self.harness
        harness.on_approval = lambda request: False
        result = await (await harness.session()).run("write it")
        self.assertFalse(os.path.exists(os.path.join(self.dirs.workspace, "protected/no.txt")))
        results = [event.data for event in result.events if event.type == "tool/result"]
        self.assertEqual(results[0]["error"]["code"], "APPROVAL_REJECTED")

    async def test_cancel_stops_a_running_turn_and_the_run_ends_aborted(self) -> None:
        self.llm.enqueue({"text": ["partial ", "answer ", "never ends"], "stallAfterChunks": 3})
        session = await self.harness.session()
        run = asyncio.ensure_future(session.run("talk forever"))
        while not self.llm.requests() or "firstByteAt" not in self.llm.requests()[0]["timing"]:
            await asyncio.sleep(0.02)
        self.assertTrue(await session.cancel())
        result = await asyncio.wait_for(run, 15)
        self.assertEqual(result.reason, "aborted")
        message = next(event for event in result.events if event.type == "assistant/message")
        self.assertTrue(message.data.get("interrupted"))

    async def test_a_runtime_that_dies_mid_run_fails_the_run_with_runtime_exited(self) -> None:
        self.llm.enqueue({"text": ["never ", "finished"], "stallAfterChunks": 2})
        harness = await self.start()
        run = asyncio.ensure_future((await harness.session()).run("talk"))
        while not self.llm.requests():
            await asyncio.sleep(0.02)
        os.kill(harness.pid, signal.SIGKILL)
        with self.assertRaises(DshError) as caught:
            await asyncio.wait_for(run, 15)
        self.assertEqual(caught.exception.code, RUNTIME_EXITED)
        self.assertIn("killed by signal 9", caught.exception.message)

    async def test_dsh_model_is_the_default_model_and_an_explicit_model_wins(self) -> None:
        self.llm.enqueue({"text": "pro"}, {"text": "flash"})
        harness = await self.start(env={"DSH_MODEL": "deepseek-v4-pro"})
        await (await harness.session()).run("which model?")
        await (await harness.session(model="deepseek/deepseek-v4-flash")).run("and now?")
        self.assertEqual([request["body"]["model"] for request in self.llm.requests()], ["deepseek-v4-pro", "deepseek-v4-flash"])

    async def test_close_shuts_the_runtime_down_through_the_protocol(self) -> None:
        harness = await self.start()
        closed = await harness.close()
        self.assertEqual((closed.stage, closed.returncode), ("shutdown", 0))


if __name__ == "__main__":
    unittest.main()
