#!/bin/sh
# runtasks Claude Code plugin: every hook runs this script with the
# runtasks subcommand and its flags ("stop-hook --agent claude", …).
#
# It runs the first runtasks binary it finds:
#   1. $RUNTASKS_BIN (set it in the environment Claude Code starts with, or
#      in the "env" of ~/.claude/settings.json),
#   2. runtasks on PATH,
#   3. $GOBIN/runtasks, $HOME/go/bin/runtasks (go install),
#      $HOME/.local/bin/runtasks.
# None found: the hook lets the agent go on (exit 0) and says why in a
# systemMessage, since a hook must never break the agent.
for bin in "${RUNTASKS_BIN:-}" "$(command -v runtasks 2>/dev/null)" \
	"${GOBIN:+$GOBIN/runtasks}" "${HOME:+$HOME/go/bin/runtasks}" "${HOME:+$HOME/.local/bin/runtasks}"; do
	if [ -n "$bin" ] && [ -f "$bin" ] && [ -x "$bin" ]; then
		exec "$bin" "$@"
	fi
done
printf '%s\n' '{"systemMessage":"runtasks plugin: no runtasks binary found ($RUNTASKS_BIN, PATH, ~/go/bin, ~/.local/bin), so its hooks do nothing. Install it (go install github.com/runtasks/runtasks/cmd/runtasks@latest) or set RUNTASKS_BIN."}'
exit 0
