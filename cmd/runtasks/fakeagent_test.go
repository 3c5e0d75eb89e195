package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fakeAgentMain behaves like `claude -p --output-format stream-json --verbose
// -- PROMPT`: it prints stream-json lines in the shapes Claude Code 2.1.x
// writes, and does one piece of work with the real bd on PATH.
//
// FAKEAGENT_MODE:
//   - close (default): close the first ready task under FAKEAGENT_EPIC; with
//     none left, claim <promise>ALL TASKS COMPLETE</promise>.
//   - idle: look around, change nothing.
//   - interrupt: start a long tool call, send SIGINT to the parent (as a
//     terminal's Ctrl-C would reach runtasks), and wait for runtasks to stop
//     it with SIGINT; exit 130.
//   - fail: print an error result and exit 1.
//   - task: a worker of runtasks run --workers (fakeWorker).
//
// FAKEAGENT_ADDALL, when set, makes close write done-ID.txt and commit the
// whole work tree (git add -A; git commit). FAKEAGENT_LOG, when set, gets one line per run: the last line of the
// prompt (runtasks' state line). FAKEAGENT_TOKENS=N adds the result's
// modelUsage: 100 input and N output tokens of claude-fake-1.
func fakeAgentMain() int {
	args := os.Args[1:]
	prompt, stream, verbose := "", false, false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-p", "--print":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				prompt = args[i+1]
				i++
			}
		case "--":
			// Everything after -- is the prompt, as Claude Code reads it.
			prompt = strings.Join(args[i+1:], " ")
			i = len(args)
		case "--output-format":
			if i+1 < len(args) {
				stream = args[i+1] == "stream-json"
				i++
			}
		case "--verbose":
			verbose = true
		}
	}
	if stream && !verbose {
		fmt.Fprintln(os.Stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return 1
	}
	if prompt == "" || !stream {
		fmt.Fprintln(os.Stderr, "fakeagent: want -p PROMPT --output-format stream-json --verbose")
		return 1
	}
	if path := os.Getenv("FAKEAGENT_LOG"); path != "" {
		lines := strings.Split(strings.TrimSpace(prompt), "\n")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			fmt.Fprintln(f, lines[len(lines)-1])
			f.Close()
		}
	}

	sid := fmt.Sprintf("fa%06d-0000-4000-8000-%012d", os.Getpid()%1000000, time.Now().UnixNano()%1000000000000)
	emit := func(v map[string]any) {
		v["session_id"] = sid
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	}
	msgN := 0
	assistant := func(blocks ...map[string]any) {
		msgN++
		emit(map[string]any{"type": "assistant", "parent_tool_use_id": nil,
			"uuid": fmt.Sprintf("a-%d", msgN),
			"message": map[string]any{"id": fmt.Sprintf("msg_fake%06d", msgN), "type": "message", "role": "assistant",
				"model": "claude-fake-1", "content": blocks, "stop_reason": nil, "stop_sequence": nil,
				"usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}})
	}
	toolResult := func(id, out string, isErr bool) {
		emit(map[string]any{"type": "user", "parent_tool_use_id": nil, "uuid": "u-" + id,
			"message": map[string]any{"role": "user", "content": []map[string]any{
				{"tool_use_id": id, "type": "tool_result", "content": out, "is_error": isErr}}}})
	}
	result := func(subtype, text string, isErr bool) {
		ev := map[string]any{"type": "result", "subtype": subtype, "is_error": isErr, "duration_ms": 12,
			"duration_api_ms": 10, "num_turns": msgN, "result": text, "stop_reason": "end_turn",
			"terminal_reason": "completed", "total_cost_usd": 0, "permission_denials": []any{},
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5}, "uuid": "r-1"}
		if n, err := strconv.Atoi(os.Getenv("FAKEAGENT_TOKENS")); err == nil {
			ev["modelUsage"] = map[string]any{"claude-fake-1": map[string]any{"inputTokens": 100, "outputTokens": n,
				"cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}}
		}
		emit(ev)
	}
	emit(map[string]any{"type": "system", "subtype": "init", "cwd": mustGetwd(), "tools": []string{"Bash", "Edit", "Read"},
		"mcp_servers": []any{}, "model": "claude-fake-1", "permissionMode": "default", "apiKeySource": "ANTHROPIC_API_KEY",
		"claude_code_version": "2.1.330", "output_style": "default", "uuid": "init-1"})

	switch mode := os.Getenv("FAKEAGENT_MODE"); mode {
	case "", "close":
		epic := os.Getenv("FAKEAGENT_EPIC")
		assistant(map[string]any{"type": "tool_use", "id": "toolu_ready", "name": "Bash",
			"input": map[string]any{"command": "bd ready --json --parent " + epic, "description": "List ready tasks"}})
		out, err := exec.Command("bd", "ready", "--json", "--limit", "0", "--parent", epic).Output()
		if err != nil {
			toolResult("toolu_ready", err.Error(), true)
			result("error_during_execution", "bd ready failed: "+err.Error(), true)
			return 1
		}
		toolResult("toolu_ready", string(out), false)
		var ready []struct {
			ID   string `json:"id"`
			Type string `json:"issue_type"`
		}
		_ = json.Unmarshal(out, &ready)
		id := ""
		for _, is := range ready {
			if is.Type != "epic" {
				id = is.ID
				break
			}
		}
		if id == "" {
			text := "Every task is closed.\n\n<promise>ALL TASKS COMPLETE</promise>"
			assistant(map[string]any{"type": "text", "text": text})
			result("success", text, false)
			return 0
		}
		assistant(map[string]any{"type": "tool_use", "id": "toolu_close", "name": "Bash",
			"input": map[string]any{"command": "bd close " + id + " --reason done", "description": "Close the task"}})
		out, err = exec.Command("bd", "close", id, "--reason", "done by fakeagent", "--json").CombinedOutput()
		if err != nil {
			toolResult("toolu_close", string(out), true)
			result("error_during_execution", "bd close failed: "+string(out), true)
			return 1
		}
		toolResult("toolu_close", string(out), false)
		if os.Getenv("FAKEAGENT_ADDALL") != "" {
			// As agents do: everything in the work tree goes into a commit.
			os.WriteFile("done-"+id+".txt", []byte(id+"\n"), 0o644)
			exec.Command("git", "add", "-A").Run()
			exec.Command("git", "commit", "-qm", "work on "+id).Run()
		}
		text := "Closed " + id + "."
		assistant(map[string]any{"type": "text", "text": text})
		result("success", text, false)
	case "task":
		return fakeWorker(assistant, toolResult, result)
	case "idle":
		assistant(map[string]any{"type": "tool_use", "id": "toolu_ls", "name": "Bash",
			"input": map[string]any{"command": "ls", "description": "Look around"}})
		toolResult("toolu_ls", "project.yaml", false)
		text := "I looked around and will continue later."
		assistant(map[string]any{"type": "text", "text": text})
		result("success", text, false)
	case "interrupt":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		assistant(map[string]any{"type": "tool_use", "id": "toolu_sleep", "name": "Bash",
			"input": map[string]any{"command": "sleep 600", "description": "Wait a long time"}})
		syscall.Kill(os.Getppid(), syscall.SIGINT)
		select {
		case <-sig:
			toolResult("toolu_sleep", "Interrupted", true)
			result("error_during_execution", "Interrupted by user", true)
			return 130
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "fakeagent: runtasks never stopped me")
			return 3
		}
	case "fail":
		result("error_during_execution", "API Error: 500 fake failure", true)
		return 1
	default:
		fmt.Fprintf(os.Stderr, "fakeagent: unknown FAKEAGENT_MODE %q\n", mode)
		return 2
	}
	return 0
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
