"""The display fold's items (``session/view``, @dsh/session-view folded by the runtime) after scripted runs on
one shared runtime: what a run shows, read by the SDK, and the generated TypedDicts that describe each item."""
from __future__ import annotations

import os
import unittest
from typing import Any, Dict, List, Mapping

from dsh import REQUEST_FAILED, ApprovalRequest, DshError, protocol

from .support import SharedRuntimeTest

#: The generated TypedDict of each item kind (python/sdk/dsh/protocol.py, from the schema the fold's types come from).
ITEM_TYPES: Dict[str, Any] = {
    "user": protocol.UserItem,
    "assistant": protocol.AssistantItem,
    "tool": protocol.ToolItem,
    "approval": protocol.ApprovalItem,
    "notice": protocol.NoticeItem,
    "turn-end": protocol.TurnEndItem,
    "subagent": protocol.SubagentItem,
}


def write(call_id: str, path: str, text: str) -> Dict[str, Any]:
    return {"toolCalls": [{"id": call_id, "name": "write_file", "arguments": {"path": path, "text": text}}]}


class ViewTest(SharedRuntimeTest):

    def assert_typed(self, items: List[Mapping[str, Any]]) -> None:
        """Every item has exactly the keys its generated TypedDict allows: all the required ones, no others."""
        for item in items:
            declared = ITEM_TYPES[item["kind"]]
            keys = set(item)
            self.assertLessEqual(set(declared.__required_keys__), keys, item)
            self.assertLessEqual(keys, set(declared.__required_keys__) | set(declared.__optional_keys__), item)

    def test_an_approved_write_shows_as_a_tool_card_with_its_change_applied_and_the_decision(self) -> None:
        session = self.harness.session(on_approval=lambda request: "allow_once")
        self.llm.enqueue(write("w1", "protected/view.txt", "shown"), {"text": "Written."})
        result = session.run("write the file")
        with open(os.path.join(self.dirs.workspace, "protected", "view.txt"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "shown")
        self.assertEqual([item["kind"] for item in result.items], ["notice", "user", "tool", "assistant", "turn-end"])
        route, user, card, answer, end = result.items
        self.assertEqual((route["cause"], route["text"]), ("route", "Model: deepseek/deepseek-v4-flash"))
        self.assertEqual((user["text"], user["source"]), ("write the file", "user"))
        self.assertEqual((card["name"], card["callId"], card["status"], card["changeState"]), ("write_file", "w1", "done", "applied"))
        self.assertEqual(card["change"], {"kind": "write", "path": "protected/view.txt", "content": "shown"})
        self.assertEqual((card["approval"]["tool"], card["approval"]["decided"]["answer"]), ("write_file", "allow_once"))
        self.assertEqual((answer["text"], answer["streaming"]), ("Written.", False))
        self.assertEqual(end["reason"], "completed")
        self.assertEqual(set(end["usage"]), {"input", "output", "cacheRead", "cacheWrite"})
        # The run's text and reason are the fold's: the last assistant item and the last turn end.
        self.assertEqual((result.text, result.reason, result.error), ("Written.", "completed", None))
        self.assert_typed(result.items)

        whole = session.view()
        self.assertEqual(whole["length"], len(session.events()))
        self.assertEqual(whole["items"], result.items)
        self.assertEqual(self.harness.view(session.id, from_seq=card["seq"] + 1)["items"], [answer, end])

    def test_a_refused_write_is_a_failed_card_whose_change_never_happened(self) -> None:
        def refuse(request: ApprovalRequest) -> Dict[str, str]:
            return {"answer": "reject", "message": "not that file"}

        session = self.harness.session(on_approval=refuse)
        self.llm.enqueue(write("w2", "protected/never.txt", "x"), {"text": "Refused, then."})
        result = session.run("write another")
        self.assertFalse(os.path.exists(os.path.join(self.dirs.workspace, "protected", "never.txt")))
        cards = [item for item in result.items if item["kind"] == "tool"]
        self.assertEqual([(c["status"], c["changeState"], c["error"]["code"]) for c in cards], [("error", "refused", "APPROVAL_REJECTED")])
        self.assertEqual(cards[0]["approval"]["decided"]["answer"], "reject")
        self.assertEqual(result.text, "Refused, then.")
        self.assert_typed(result.items)

    def test_the_view_of_a_session_nobody_has_is_refused_naming_the_session(self) -> None:
        with self.assertRaises(DshError) as raised:
            self.harness.view("no-such-session")
        self.assertEqual(raised.exception.code, REQUEST_FAILED)
        data = (raised.exception.rpc or {}).get("data", {})
        self.assertEqual((data.get("code"), data.get("field")), ("SESSION_NOT_FOUND", "sessionId"))


if __name__ == "__main__":
    unittest.main()
