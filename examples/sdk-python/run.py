"""Drives dsh from Python (asyncio) against a real model provider.

    python3 examples/sdk-python/run.py [--minimal] ["a task"]

Needs the key of the model's provider (DEEPSEEK_API_KEY by default; DSH_MODEL picks another model) and a built
checkout (`npm run setup`). In an application, `pip install python/sdk` and `import dsh`.
"""
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "sdk"))

from dsh import ApprovalRequest, Harness  # noqa: E402

KEYS = {"deepseek": "DEEPSEEK_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def refuse(request: ApprovalRequest) -> str:
    # A person would decide here; this example refuses anything that needs approval and says what it was.
    print(f"\n[approval refused] {request.tool}: {request.summary} ({request.reason})", file=sys.stderr)
    return "reject"


async def main() -> int:
    model = os.environ.get("DSH_MODEL", "deepseek/deepseek-v4-flash")
    provider = model.split("/", 1)[0] if "/" in model else "deepseek"
    key = KEYS.get(provider)
    if key and not os.environ.get(key):
        print(f"examples/sdk-python: set {key} to run against {provider} (skipped)", file=sys.stderr)
        return 0
    args = sys.argv[1:]
    minimal = "--minimal" in args
    task = " ".join(arg for arg in args if arg != "--minimal") or "List the files in this directory and say in one sentence what the project is."
    async with Harness(minimal=minimal, stderr="inherit", on_approval=refuse) as harness:
        print(f"dsh {harness.info.version}, model {model}{' (minimal)' if minimal else ''}", file=sys.stderr)
        session = await harness.session()
        reason = "unknown"
        async for event in session.stream(task):
            if event.type == "assistant/chunk" and event.data.get("kind") == "text":
                print(event.data["text"], end="", flush=True)
            elif event.type == "tool/call":
                print(f"\n[tool] {event.data['name']} {str(event.data['arguments'])[:120]}", file=sys.stderr)
            elif event.type == "turn/end":
                reason = event.data["reason"]
        print(f"\n\n(turn {reason}; session {session.id})")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
