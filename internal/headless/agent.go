package headless

import "fmt"

// Agents runtasks run can drive.
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// Session modes (run.session).
const (
	SessionFresh  = "fresh"
	SessionResume = "resume"
)

// Command is the argument list (without the binary) that starts one
// non-interactive agent run with prompt. resumeID is the session to
// continue ("" = a fresh session); only Codex resumes. extra are the user's
// arguments (after -- on the command line).
//
// The prompt is data: it comes after "--", so a prompt that starts with
// "-" or "---" (a YAML front matter, a list) is never read as an option,
// and a variadic option in extra (--allowedTools A B) cannot swallow it.
//
//	claude -p --output-format stream-json --verbose EXTRA… -- PROMPT
//	codex exec --json EXTRA… -- PROMPT
//	codex exec --json EXTRA… resume SESSION_ID -- PROMPT
func Command(agent, prompt, resumeID string, extra []string) ([]string, error) {
	switch agent {
	case AgentClaude:
		args := []string{"-p", "--output-format", "stream-json", "--verbose"}
		args = append(args, extra...)
		return append(args, "--", prompt), nil
	case AgentCodex:
		args := append([]string{"exec", "--json"}, extra...)
		if resumeID != "" {
			args = append(args, "resume", resumeID)
		}
		return append(args, "--", prompt), nil
	}
	return nil, fmt.Errorf("unknown agent %q (want %s or %s)", agent, AgentClaude, AgentCodex)
}
