"""Finding the runtime: DSH_BIN, then ``dsh`` on PATH, then this checkout's own launcher."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Mapping, Optional, Sequence

from .errors import RUNTIME_NOT_FOUND, DshError

#: In a dsh checkout this file is ``python/sdk/dsh/runtime.py``: the launcher is ``apps/cli/bin/dsh.js``.
REPOSITORY_LAUNCHER = Path(__file__).resolve().parents[3] / "apps" / "cli" / "bin" / "dsh.js"


def _with_node(script: str, env: Mapping[str, str]) -> List[str]:
    node = shutil.which("node", path=env.get("PATH"))
    if not node:
        raise DshError(RUNTIME_NOT_FOUND, f"cannot run {script}: no `node` on PATH")
    return [node, script]


def find_runtime(command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> List[str]:
    """The argv that starts the runtime (without ``--profile sdk``).

    A given ``command`` wins; then ``$DSH_BIN`` (a program, or a ``.js`` launcher run with node); then ``dsh``
    on PATH; then the launcher of the checkout this package sits in. Raises DshError RUNTIME_NOT_FOUND naming
    what was tried.
    """
    env = os.environ if env is None else env
    if command:
        program = command[0]
        found = program if os.sep in program and os.path.exists(program) else shutil.which(program, path=env.get("PATH"))
        if not found:
            where = "" if os.sep in program else " on PATH"
            raise DshError(RUNTIME_NOT_FOUND, f'cannot start the dsh runtime: the command "{program}" was not found{where}')
        return [found, *command[1:]]
    bin_path = env.get("DSH_BIN")
    if bin_path:
        if not os.path.exists(bin_path):
            raise DshError(RUNTIME_NOT_FOUND, f'cannot start the dsh runtime: DSH_BIN is "{bin_path}", which does not exist')
        return _with_node(bin_path, env) if bin_path.endswith((".js", ".mjs")) else [bin_path]
    installed = shutil.which("dsh", path=env.get("PATH"))
    if installed:
        return [installed]
    if REPOSITORY_LAUNCHER.exists():
        return _with_node(str(REPOSITORY_LAUNCHER), env)
    # Inside a checkout whose launcher is not built yet, that launcher is worth naming; installed, the path is meaningless.
    checkout = (REPOSITORY_LAUNCHER.parent.parent / "package.json").exists()
    where = f", and {REPOSITORY_LAUNCHER} does not exist (run npm run setup)" if checkout else ""
    raise DshError(
        RUNTIME_NOT_FOUND,
        f"cannot find the dsh runtime: DSH_BIN is not set and there is no `dsh` on PATH{where}; install dsh (npm install -g dsh-<version>.tgz) or pass command=[...]",
    )
