#!/usr/bin/env bash
# Refuses recursive deletes and piping downloads into a shell (exit 2: the reason on stderr goes to the model).
command=$(jq -r '.tool_input.command // empty')
if echo "$command" | grep -Eq 'rm[[:space:]]+-[a-zA-Z]*r[a-zA-Z]*f|curl[^|]*\|[[:space:]]*(ba)?sh'; then
  echo "Blocked by block-dangerous-bash.sh: '$command' is not allowed in this repository." >&2
  exit 2
fi
exit 0
