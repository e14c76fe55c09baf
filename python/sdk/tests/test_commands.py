"""``Session.command`` driving the real runtime against the mock model server; the workspace holds a Claude
Code command file."""
from __future__ import annotations

import os
import unittest

from dsh import CommandResult

from .support import SharedAsyncRuntimeTest

GREET = "---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1, politely.\n"


class CommandsTest(SharedAsyncRuntimeTest):
    @classmethod
    def prepare_workspace(cls, workspace: str) -> None:
        os.makedirs(os.path.join(workspace, ".claude", "commands"))
        with open(os.path.join(workspace, ".claude", "commands", "greet.md"), "w", encoding="utf-8") as handle:
            handle.write(GREET)

    async def test_a_user_command_runs_with_its_argument_and_the_model_gets_the_expanded_prompt(self) -> None:
        self.llm.enqueue({"text": "Hello, Ada."})
        session = await self.harness.session()
        greet = [command for command in await session.commands() if command["name"] == "greet"]
        self.assertEqual(greet[0]["argumentHint"], "<name>")
        result = await session.command("/greet Ada")
        self.assertIsInstance(result, CommandResult)
        self.assertEqual((result.handled, result.name), (True, "greet"))
        assert result.run is not None
        self.assertEqual((result.run.text, result.run.reason), ("Hello, Ada.", "completed"))
        self.assertEqual(self.llm.requests()[-1]["body"]["messages"][-1], {"role": "user", "content": "Say hello to Ada, politely."})

    async def test_a_built_in_runs_without_a_turn_and_an_unknown_word_sends_nothing(self) -> None:
        session = await self.harness.session()
        cost = await session.command("/cost")
        self.assertEqual((cost.handled, cost.run), (True, None))
        self.assertIn("0 model requests", cost.output or "")
        unknown = await session.command("/nosuch x")
        self.assertEqual((unknown.handled, unknown.unknown), (False, "nosuch"))
        self.assertEqual(self.llm.requests(), [])

    async def test_changes_lists_the_files_and_rewind_restores_them_on_disk(self) -> None:
        path = os.path.join(self.dirs.workspace, "notes.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("before\n")
        self.llm.enqueue(
            {"toolCalls": [{"id": "r", "name": "read", "arguments": {"path": "notes.txt"}}]},
            {"toolCalls": [{"id": "e", "name": "edit", "arguments": {"path": "notes.txt", "old_string": "before", "new_string": "after"}}]},
            {"text": "Done."},
        )
        session = await self.harness.session()
        await session.run("edit the notes")
        changes = await session.changes()
        self.assertEqual([(file["path"], file["status"]) for file in changes["files"]], [("notes.txt", "modified")])
        self.assertIn("-before\n+after", changes["files"][0]["patch"])
        done = await session.rewind(1)
        self.assertEqual((done["conflicts"], done["actor"]), ([], "client:sdk"))
        with open(path, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "before\n")


if __name__ == "__main__":
    unittest.main()
