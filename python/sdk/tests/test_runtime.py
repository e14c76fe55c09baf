"""Finding and starting the runtime, and the errors when it cannot be found or does not start."""
from __future__ import annotations

import os
import stat
import unittest
from pathlib import Path
from unittest import mock

from dsh import REPOSITORY_LAUNCHER, RUNTIME_EXITED, RUNTIME_NOT_FOUND, DshError, Harness, find_runtime

from .support import TempDirs


class FindRuntimeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dirs = TempDirs()
        self.addCleanup(self.dirs.cleanup)

    def executable(self, name: str) -> str:
        path = os.path.join(self.dirs.home, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def test_dsh_bin_wins_then_dsh_on_path_then_the_checkout_launcher(self) -> None:
        installed = self.executable("dsh")
        chosen = self.executable("my-dsh")
        path = os.pathsep.join([self.dirs.home, os.environ.get("PATH", "")])
        self.assertEqual(find_runtime(env={"DSH_BIN": chosen, "PATH": path}), [chosen])
        self.assertEqual(find_runtime(env={"PATH": path}), [installed])
        without = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if not os.path.exists(os.path.join(d, "dsh")))
        found = find_runtime(env={"PATH": without})
        self.assertEqual(found[1:], [str(REPOSITORY_LAUNCHER)])
        self.assertTrue(os.path.basename(found[0]).startswith("node"))

    def test_a_missing_dsh_bin_is_a_clear_runtime_not_found_error(self) -> None:
        missing = os.path.join(self.dirs.home, "no-such-dsh")
        with self.assertRaises(DshError) as caught:
            find_runtime(env={"DSH_BIN": missing, "PATH": os.environ.get("PATH", "")})
        self.assertEqual(caught.exception.code, RUNTIME_NOT_FOUND)
        self.assertIn(f'DSH_BIN is "{missing}", which does not exist', caught.exception.message)

    def test_found_nowhere_names_the_checkout_launcher_only_inside_a_checkout(self) -> None:
        empty = {"PATH": self.dirs.workspace}
        # Installed from a wheel, the checkout path points into site-packages' parents: not named.
        outside = Path(self.dirs.home) / "apps" / "cli" / "bin" / "dsh.js"
        with mock.patch("dsh.runtime.REPOSITORY_LAUNCHER", outside), self.assertRaises(DshError) as caught:
            find_runtime(env=empty)
        self.assertEqual(caught.exception.code, RUNTIME_NOT_FOUND)
        self.assertNotIn(str(outside), caught.exception.message)
        self.assertIn("DSH_BIN is not set and there is no `dsh` on PATH; install dsh", caught.exception.message)
        # In a checkout whose launcher is not built, that launcher is named with the fix.
        (Path(self.dirs.home) / "apps" / "cli").mkdir(parents=True)
        (Path(self.dirs.home) / "apps" / "cli" / "package.json").write_text("{}", encoding="utf-8")
        with mock.patch("dsh.runtime.REPOSITORY_LAUNCHER", outside), self.assertRaises(DshError) as caught:
            find_runtime(env=empty)
        self.assertIn(f"{outside} does not exist (run npm run setup)", caught.exception.message)


class StartTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.dirs = TempDirs()
        self.addCleanup(self.dirs.cleanup)

    async def test_a_command_that_does_not_exist_is_runtime_not_found(self) -> None:
        with self.assertRaises(DshError) as caught:
            await Harness(command=["dsh-that-is-not-installed"]).start()
        self.assertEqual(caught.exception.code, RUNTIME_NOT_FOUND)
        self.assertIn('"dsh-that-is-not-installed" was not found on PATH', caught.exception.message)

    async def test_a_runtime_that_exits_before_answering_is_runtime_exited_quoting_its_stderr(self) -> None:
        missing = os.path.join(self.dirs.home, "missing.patch.yml")
        with self.assertRaises(DshError) as caught:
            await Harness(cwd=self.dirs.workspace, env={"DSH_HOME": self.dirs.home}, patches=[missing]).start()
        self.assertEqual(caught.exception.code, RUNTIME_EXITED)
        self.assertIn("exited with code 2", caught.exception.message)
        self.assertIn(f"{missing}: patch file not found", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
