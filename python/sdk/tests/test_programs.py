"""Options for programs, through the synchronous API on one shared runtime: client-defined tools, per-run
step limits and tool filters, and fork, events and raw requests."""
from __future__ import annotations

import os
import unittest
from typing import Any, Dict, List

from dsh import REQUEST_FAILED, ApprovalRequest, ClientTool, DshError, ToolCall

from .support import SharedRuntimeTest

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "minLength": 1}}, "required": ["city"], "additionalProperties": False}


def call(call_id: str, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {"toolCalls": [{"id": call_id, "name": name, "arguments": arguments}]}


class ProgramsTest(SharedRuntimeTest):

    def sent_tools(self, index: int) -> List[str]:
        return [tool["function"]["name"] for tool in self.llm.requests()[index]["body"]["tools"]]

    def test_a_client_tool_is_called_by_the_model_and_its_result_is_logged(self) -> None:
        calls: List[ToolCall] = []

        def weather(arguments: Dict[str, Any], tool_call: ToolCall) -> str:
            calls.append(tool_call)
            return f"sunny in {arguments['city']}"

        session = self.harness.session(tools=[ClientTool("get_weather", "The weather in a city.", WEATHER, weather)])
        self.llm.enqueue(call("c1", "get_weather", {"city": "Lyon"}), {"text": "It is sunny."})
        result = session.run("weather in Lyon?")
        self.assertEqual((result.reason, result.text), ("completed", "It is sunny."))
        self.assertEqual(calls, [ToolCall(session_id=session.id, call_id="c1", tool="get_weather", arguments={"city": "Lyon"})])
        self.assertIn("get_weather", self.sent_tools(0))
        results = [event.data for event in result.events if event.type == "tool/result"]
        self.assertEqual(results, [{"callId": "c1", "content": [{"type": "text", "text": "sunny in Lyon"}]}])
        declared = [event.data for event in session.events() if event.type == "sdk/client-tools"]
        self.assertEqual(declared, [{"tools": [{"name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER}]}])

    def test_a_handler_that_raises_is_a_tool_failed_result(self) -> None:
        def broken(_arguments: Dict[str, Any], _call: ToolCall) -> str:
            raise ValueError("the weather service is down")

        session = self.harness.session(tools=[ClientTool("get_weather", "The weather in a city.", WEATHER, broken)])
        self.llm.enqueue(call("c1", "get_weather", {"city": "Oslo"}), {"text": "sorry"})
        result = session.run("weather?")
        [failed] = [event.data for event in result.events if event.type == "tool/result"]
        self.assertEqual(failed["error"]["code"], "TOOL_FAILED")
        self.assertIn("the weather service is down", failed["error"]["message"])

    def test_a_client_tool_cannot_shadow_a_built_in_tool(self) -> None:
        with self.assertRaises(DshError) as caught:
            self.harness.session(tools=[ClientTool("bash", "Not the real bash.", WEATHER, lambda _a, _c: "shadowed")])
        self.assertEqual(caught.exception.code, REQUEST_FAILED)
        self.assertIn("tools[0].name", str(caught.exception))
        self.assertEqual(self.llm.requests(), [])

    def test_max_steps_ends_the_run_and_allowed_tools_narrows_the_request(self) -> None:
        session = self.harness.session(allowed_tools=["write_file"])
        self.llm.enqueue(call("w1", "write_file", {"path": "a.txt", "text": "one"}), call("w2", "write_file", {"path": "b.txt", "text": "two"}))
        result = session.run("write twice", max_steps=1)
        self.assertEqual(result.reason, "max-steps")
        self.assertEqual(len(self.llm.requests()), 1)
        self.assertEqual(self.sent_tools(0), ["write_file"])
        self.assertFalse(os.path.exists(os.path.join(self.dirs.workspace, "b.txt")))

    def test_the_approval_callback_edits_the_arguments_and_the_edited_call_runs_and_is_logged(self) -> None:
        asked: List[ApprovalRequest] = []

        def review(request: ApprovalRequest) -> Dict[str, Any]:
            asked.append(request)
            return {"answer": "allow_once", "arguments": {**request.arguments, "path": "protected/reviewed.txt"}}

        session = self.harness.session(on_approval=review)
        self.llm.enqueue(call("w1", "write_file", {"path": "protected/model.txt", "text": "kept text"}), {"text": "done"})
        result = session.run("write it")
        self.assertEqual([(request.tool, request.arguments) for request in asked], [("write_file", {"path": "protected/model.txt", "text": "kept text"})])
        with open(os.path.join(self.dirs.workspace, "protected", "reviewed.txt"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "kept text")
        self.assertFalse(os.path.exists(os.path.join(self.dirs.workspace, "protected", "model.txt")))
        edited = [event.data for event in result.events if event.type == "tool/edited"]
        self.assertEqual(edited, [{"callId": "w1", "arguments": {"path": "protected/reviewed.txt", "text": "kept text"}}])

    def test_a_refusal_with_a_message_reaches_the_model(self) -> None:
        session = self.harness.session(on_approval=lambda _request: {"answer": "reject", "message": "write under staging/ instead"})
        self.llm.enqueue(call("w1", "write_file", {"path": "protected/no.txt", "text": "x"}), {"text": "ok"})
        result = session.run("write it")
        [refused] = [event.data for event in result.events if event.type == "tool/result"]
        self.assertEqual(refused["error"]["code"], "APPROVAL_REJECTED")
        self.assertIn("write under staging/ instead", self.llm.requests()[1]["body"]["messages"][-1]["content"])

    def test_fork_events_and_raw_requests(self) -> None:
        self.llm.enqueue({"text": "first answer"})
        session = self.harness.session()
        session.run("first")
        stored = session.events()
        end = next(event.seq for event in stored if event.type == "turn/end")
        fork = session.fork(end)
        self.assertNotEqual(fork.id, session.id)
        page = self.harness.events(fork.id, limit=2)
        self.assertEqual([event.type for event in page.events], [event.type for event in stored[:2]])
        self.assertEqual(page.next_seq, 2)
        listed = self.harness.request("session/list", {"cwd": self.dirs.workspace})
        self.assertIn(fork.id, [summary["id"] for summary in listed["sessions"]])


if __name__ == "__main__":
    unittest.main()
