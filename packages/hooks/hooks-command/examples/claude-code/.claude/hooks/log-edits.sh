#!/usr/bin/env bash
# Keeps a log of edited files and reminds the model to run the formatter.
input=$(cat)
file=$(echo "$input" | jq -r '.tool_input.file_path // empty')
echo "$(echo "$input" | jq -r .tool_name) $file" >> "$CLAUDE_PROJECT_DIR/.edits.log"
jq -n --arg file "$file" '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("Edited \($file): run npm run format before you finish.")}}'
