#!/usr/bin/env bash
# make demo: a 3-task epic worked to completion by repeated stop-hook calls,
# in a throwaway project with the real bd. Prints each decision.
set -euo pipefail

RUNTASKS=${RUNTASKS:-$(pwd)/bin/runtasks}
command -v bd >/dev/null || { echo "demo: bd not on PATH (run: make bd)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/runtasks-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" BD_DISABLE_METRICS=1 BD_NON_INTERACTIVE=1 BEADS_ACTOR=demo
# Everything runtasks keeps (the trust store, caches) stays in the
# throwaway home, and nothing of the caller's runtasks settings applies.
export XDG_CONFIG_HOME="$HOME/.config" XDG_CACHE_HOME="$HOME/.cache" XDG_STATE_HOME="$HOME/.local/state"
unset CLAUDE_PROJECT_DIR
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^RUNTASKS_' || true)
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
mkdir -p "$HOME" "$work/proj"
cd "$work/proj"

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. A project with a beads epic of three tasks (task 2 waits for task 1)"
git init -q
bd init --prefix demo --non-interactive --stealth --skip-agents --skip-hooks -q >/dev/null 2>&1
epic=$(bd create "Ship the export feature" --type epic --silent)
t1=$(bd create "Design the export format" --parent "$epic" --priority 1 --silent)
t2=$(bd create "Write the exporter" --parent "$epic" --priority 1 --silent)
t3=$(bd create "Document the export command" --parent "$epic" --priority 2 --silent)
bd dep add "$t2" "$t1" >/dev/null 2>&1
echo "epic $epic: $t1, $t2 (after $t1), $t3"
printf 'workflow:\n  epic: %s\n  stop_hook:\n    max_cycles: 10\n' "$epic" > project.yaml
cat project.yaml
# The hooks read a project.yaml only once you trust it (as direnv does).
run "$RUNTASKS" trust --yes

# stop MESSAGE: what Claude Code sends at a stop, piped into the hook
# (MESSAGE holds no quote or backslash, so it is a JSON string as it is).
stop() {
	local msg=$1
	printf '\n\033[2magent stops saying: %s\033[0m\n' "$msg"
	local in
	in=$(printf '{"session_id":"demo-session","transcript_path":"","cwd":"%s","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"%s"}' \
		"$PWD" "$msg")
	local out
	out=$(printf '%s' "$in" | "$RUNTASKS" stop-hook)
	if [ -z "$out" ]; then echo "hook: (no output) stop allowed"; else echo "hook: $out" | cut -c1-240; fi
	"$RUNTASKS" status --history 1 --jq '.history[-1] | "→ \(.outcome): \(.why)  [cycle \(.cycle)/\(.max)]"'
}

say "2. The agent stops early: runtasks blocks and re-feeds the orchestration prompt"
stop "I've made good progress on the design, let me know if you want me to continue."

say "3. The agent closes one task, then claims the epic is done: beads disagrees"
run bd close "$t1" --reason "format designed in docs/export.md" -q
stop "Done! <promise>ALL TASKS COMPLETE</promise>"

say "4. The agent finishes the rest and claims completion again: beads agrees"
run bd close "$t2" --reason "exporter written and tested" -q
run bd close "$t3" --reason "command documented" -q
stop "Everything is closed and verified. <promise>ALL TASKS COMPLETE</promise>"

say "5. runtasks status"
run "$RUNTASKS" status
