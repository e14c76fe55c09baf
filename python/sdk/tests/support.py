"""Test support: the mock model server (`dsh-mock-llm`, a real HTTP server speaking DeepSeek's stream) as a
child process, and temp folders. Only the model is fake; the runtime is the real `dsh --profile sdk` of this
checkout (run from dist: build first)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path
import unittest
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[3]
MOCK_BIN = REPO / "packages" / "test-support" / "llm-mock-server" / "bin" / "dsh-mock-llm.js"
FIXTURE_TOOLS = REPO / "packages" / "test-support" / "harness" / "dist" / "fixture-tools.js"


class MockModel:
    """`dsh-mock-llm --port 0`, scripted over its control API."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("the tests need `node` on PATH")
        self.process = subprocess.Popen([node, str(MOCK_BIN), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"dsh-mock-llm did not start: {line!r} {self.process.stderr.read() if self.process.stderr else ''}")
        self.url = line[len("listening on ") :].strip()

    def _call(self, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method="POST" if data is not None else "GET", headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def enqueue(self, *replies: Dict[str, Any]) -> None:
        self._call("/__mock/enqueue", list(replies))

    def requests(self) -> List[Dict[str, Any]]:
        return self._call("/__mock/requests")

    def reset(self) -> None:
        self._call("/__mock/reset", {})

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()


class TempDirs:
    """A temp DSH_HOME and workspace (real paths), removed by ``cleanup``."""

    def __init__(self) -> None:
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="dsh-py-home-"))
        self.workspace = os.path.realpath(tempfile.mkdtemp(prefix="dsh-py-ws-"))
        # Titles off, as in every test composition: the title request after a first turn would take a
        # scripted answer meant for the next turn (WITHOUT_AUTO_TITLE of @dsh/test-harness).
        with open(os.path.join(self.home, "settings.yaml"), "w", encoding="utf-8") as handle:
            handle.write("sessions.autoTitle: false\n")

    def fixture_tools_patch(self) -> str:
        path = os.path.join(self.home, "fixture-tools.patch.yml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"- insert: [{{ id: fixture-tools, name: {json.dumps(str(FIXTURE_TOOLS))} }}]\n")
        return path

    def cleanup(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        shutil.rmtree(self.workspace, ignore_errors=True)


class SharedRuntimeTest(unittest.TestCase):
    """One mock model and one `dsh --profile sdk` (with the fixture tools) for every test of the class."""

    llm: MockModel
    dirs: TempDirs
    harness: Any

    @classmethod
    def setUpClass(cls) -> None:
        from dsh import SyncHarness

        cls.llm = MockModel()
        cls.dirs = TempDirs()
        env = {"DSH_HOME": cls.dirs.home, "DEEPSEEK_BASE_URL": cls.llm.url, "DEEPSEEK_API_KEY": "test"}
        cls.harness = SyncHarness(cwd=cls.dirs.workspace, env=env, patches=[cls.dirs.fixture_tools_patch()])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.harness.close()
        cls.llm.close()
        cls.dirs.cleanup()

    def setUp(self) -> None:
        self.llm.reset()
