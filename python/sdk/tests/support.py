"""Test support: the mock model server (`dsh-mock-llm`, a real HTTP server speaking DeepSeek's stream) as a
child process, and temp folders. Only the model is fake; the runtime is the real `dsh --profile sdk` of this
checkout (run from dist: build first)."""
from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path
import unittest
from typing import Any, Awaitable, Callable, Dict, List, Optional

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


class SharedAsyncRuntimeTest(unittest.TestCase):
    """One event loop, one mock model and one asyncio ``Harness`` (a `dsh --profile sdk` with the fixture tools, on
    the class's workspace) for every test of the class: a runtime start costs about a second of CPU, and most tests
    are about a session, not about the process. A test whose subject is the runtime's start, options or end (a
    ``--patch minimal`` runtime, its death, its close, the model it starts with) starts its own with ``start``.

    Test methods may be ``async def``: each runs to its end on the class's loop, where the shared harness lives
    (``IsolatedAsyncioTestCase`` gives every test a loop of its own, so it cannot share one harness). The shared
    harness's ``on_approval`` is put back after every test."""

    llm: MockModel
    dirs: TempDirs
    harness: Any
    loop: asyncio.AbstractEventLoop
    #: How long one test may run on the loop before it fails (generous: a loaded 2-core machine).
    TEST_TIMEOUT_S = 120.0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, member in list(vars(cls).items()):
            if name.startswith("test") and inspect.iscoroutinefunction(member):
                setattr(cls, name, _on_class_loop(member))

    @classmethod
    def prepare_workspace(cls, workspace: str) -> None:
        """Files the shared workspace holds before the runtime starts (a subclass's)."""

    @classmethod
    def setUpClass(cls) -> None:
        from dsh import Harness

        cls.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(cls.loop)
        cls.llm = MockModel()
        cls.dirs = TempDirs()
        cls.prepare_workspace(cls.dirs.workspace)
        harness = Harness(cwd=cls.dirs.workspace, env=cls.env_for(cls.dirs), patches=[cls.dirs.fixture_tools_patch()])
        cls.harness = cls.loop.run_until_complete(harness.start())

    @classmethod
    def tearDownClass(cls) -> None:
        try:
            cls.loop.run_until_complete(cls.harness.close())
        finally:
            cls.llm.close()
            cls.dirs.cleanup()
            asyncio.set_event_loop(None)
            cls.loop.close()

    @classmethod
    def env_for(cls, dirs: TempDirs) -> Dict[str, str]:
        return {"DSH_HOME": dirs.home, "DEEPSEEK_BASE_URL": cls.llm.url, "DEEPSEEK_API_KEY": "test"}

    def setUp(self) -> None:
        self.llm.reset()
        callback = self.harness.on_approval
        self.addCleanup(setattr, self.harness, "on_approval", callback)

    async def start(self, dirs: Optional[TempDirs] = None, **options: Any) -> Any:
        """A runtime of this test's own (its own home and workspace unless ``dirs``), closed at the test's end."""
        from dsh import Harness

        if dirs is None:
            dirs = TempDirs()
            self.addCleanup(dirs.cleanup)
        env = {**self.env_for(dirs), **options.pop("env", {})}
        harness = await Harness(cwd=dirs.workspace, env=env, **options).start()
        self.addCleanup(lambda: self.loop.run_until_complete(harness.close()))
        return harness


def _on_class_loop(method: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    @functools.wraps(method)
    def run(self: SharedAsyncRuntimeTest) -> None:
        self.loop.run_until_complete(asyncio.wait_for(method(self), self.TEST_TIMEOUT_S))

    return run
