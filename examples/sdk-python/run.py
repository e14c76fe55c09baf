"""Drives dsh from Python (asyncio) against a real model provider.

    python3 examples/sdk-python/run.py [--minimal] ["a task"]

Needs the key of the model's provider (DEEPSEEK_API_KEY by default, in the environment or saved in
$DSH_HOME/.credentials.yaml; DSH_MODEL picks another model) and a built checkout (`npm run setup`). Prints the
answer on stdout, tools and the outcome on stderr; exits 1 when the turn did not complete. In an application,
`pip install python/sdk` and `import dsh`.
"""
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "sdk"))

from dsh import ApprovalRequest, Harness  # noqa: E402


def refuse(request: ApprovalRequest) -> str:
    # A person would decide here; this example refuses anything that needs approval and says what it was.
    print(f"\n[approval refused] {request.tool}: {request.summary} ({request.reason})", file=sys.stderr)
    return "reject"


async def main() -> int:
    args = sys.argv[1:]
    minimal = "--minimal" in args
    task = " ".join(arg for arg in args if arg != "--minimal") or "List the files in this directory and say in one sentence what the project is."
    async with Harness(minimal=minimal, stderr="inherit", on_approval=refuse) as harness:
        print(f"dsh {harness.info.version}{' (minimal)' if minimal else ''}", file=sys.stderr)
        session = await harness.session()
        end = {"reason": "unknown"}
        mid_line = False
        async for event in session.stream(task):
            if event.type == "assistant/chunk" and event.data.get("kind") == "text":
                print(event.data["text"], end="", flush=True)
                mid_line = not event.data["text"].endswith("\n")
            elif event.type == "assistant/message" and mid_line:
                # One answer per model request: end the line, so the next step's text does not run on.
                print()
                mid_line = False
            elif event.type == "model/route":
                route = event.data["route"]
                print(f"[model] {route['provider']}/{route['model']}", file=sys.stderr)
            elif event.type == "tool/call":
                print(f"[tool] {event.data['name']} {str(event.data['arguments'])[:120]}", file=sys.stderr)
            elif event.type == "turn/end":
                end = event.data
        # A missing key is such an error: its message says which variable to set and where dsh looked for it.
        error = end.get("error")
        why = f": {error['code']}: {error['message']}" if error else ""
        print(f"\n(turn {end['reason']}{why}; session {session.id})", file=sys.stderr)
    return 0 if end["reason"] == "completed" else 1

if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
