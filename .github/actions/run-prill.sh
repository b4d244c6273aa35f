#!/usr/bin/env bash
# The Action's test step (action.yml): `prill run PRILL_ARGS --junit PRILL_JUNIT
# --markdown "$GITHUB_STEP_SUMMARY"`, exiting as `prill run` does (0 passed, 1 failed,
# 2 invalid input, 3 errored). PRILL_ARGS is split into words as a shell would, quotes
# and backslashes included, with nothing expanded (no variables, no globs, no commands).
set -euo pipefail

args=()
# xargs splits as a shell does without expanding anything; printf ends each word with
# a NUL. Only when there is a word, since xargs runs printf once even for no input.
if [ -n "${PRILL_ARGS//[[:space:]]/}" ]; then
  if ! printf '%s' "$PRILL_ARGS" | xargs printf '' >/dev/null; then
    echo "error: the args input does not split into words (an unclosed quote?): $PRILL_ARGS" >&2
    exit 2
  fi
  while IFS= read -r -d '' word; do
    args+=("$word")
  done < <(printf '%s' "$PRILL_ARGS" | xargs printf '%s\0')
fi

junit="${PRILL_JUNIT-prill-junit.xml}"
report=()
[ -z "$junit" ] || report+=(--junit "$junit")
[ -z "${GITHUB_STEP_SUMMARY:-}" ] || report+=(--markdown "$GITHUB_STEP_SUMMARY")

echo "prill run ${args[*]+${args[*]}} ${report[*]+${report[*]}}" >&2
exec prill run ${args[@]+"${args[@]}"} ${report[@]+"${report[@]}"}
