"""The synchronous wrapper over the asyncio harness."""
from __future__ import annotations

import unittest

from dsh import SyncHarness

from .support import MockModel, TempDirs


class SyncHarnessTest(unittest.TestCase):
    def setUp(self) -> None:
        self.llm = MockModel()
        self.addCleanup(self.llm.close)
        self.dirs = TempDirs()
        self.addCleanup(self.dirs.cleanup)

    def test_a_blocking_run_and_a_blocking_stream(self) -> None:
        self.llm.enqueue({"text": "sync hello"}, {"text": ["streamed ", "too"]})
        env = {"DSH_HOME": self.dirs.home, "DEEPSEEK_BASE_URL": self.llm.url, "DEEPSEEK_API_KEY": "test"}
        with SyncHarness(cwd=self.dirs.workspace, env=env) as harness:
            session = harness.session()
            self.assertEqual(session.run("hi").text, "sync hello")
            chunks = [event.data["text"] for event in session.stream("again") if event.type == "assistant/chunk"]
            self.assertEqual("".join(chunks), "streamed too")
            self.assertEqual([summary.id for summary in harness.list()], [session.id])


if __name__ == "__main__":
    unittest.main()
