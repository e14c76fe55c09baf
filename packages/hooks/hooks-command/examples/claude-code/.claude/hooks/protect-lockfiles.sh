#!/usr/bin/env bash
# Lock files are written by the package manager only: deny edits with a reason (JSON output form).
file=$(jq -r '.tool_input.file_path // empty')
case "$file" in
  *package-lock.json|*pnpm-lock.yaml|*yarn.lock)
    jq -n --arg file "$file" '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: ("\($file) is generated; run the package manager instead")}}'
    ;;
esac
exit 0
