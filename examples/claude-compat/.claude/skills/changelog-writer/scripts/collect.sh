#!/bin/sh
# The commits since the last tag (all of them when there is no tag), one subject per line.
set -eu
since=$(git describe --tags --abbrev=0 2>/dev/null || true)
if [ -n "$since" ]; then git log --no-merges --format=%s "$since..HEAD"; else git log --no-merges --format=%s; fi
