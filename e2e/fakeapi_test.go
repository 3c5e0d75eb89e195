// Package e2e runs runtasks under the real Claude Code, Codex and Gemini
// CLIs. The CLIs talk to fake model APIs served here on 127.0.0.1: a fake
// Anthropic Messages API, a fake OpenAI Responses API and a fake Gemini API,
// all streaming SSE, all scripted per test and all recording every request
// they get.
//
// e2e_test.go and gemini_test.go play one scenario under the three CLIs
// (false promises rejected, tasks closed with bd, the true promise
// accepted). lifecycle_test.go runs
// Claude Code in the user's world: a plain repository with its own
// .gitignore, the hooks installed by `runtasks install claude` (or
// --global under a temporary HOME), sessions armed by typing /run-tasks,
// `runtasks claim` from the Bash tool, linked worktrees, the checkpoint
// promise, a second session finishing the epic, an untrusted clone, the
// done-token contract and the max_cycles cap. A failing test keeps
// runtasks' log, Claude Code's debug log, the stream-json output and what
// reached the model at each request (E2E_LOG_DIR keeps them always).
package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted model turn: a text answer or one shell command.
type Reply struct {
	// Text is the assistant's text (the turn ends after it) when Shell is empty.
	Text string
	// Shell is a command for the client's shell tool (Bash in Claude Code,
	// the shell/exec tool in Codex); the turn continues with its result.
	Shell string
}

// Script answers the n-th main request (1-based; side requests without
// tools are not counted).
type Script func(n int, req *Request) Reply

// Request is one recorded request to a fake API.
type Request struct {
	// Method and Path of the HTTP request (query stripped).
	Method, Path string
	// Body is the raw request body.
	Body []byte
	// Main is true for agent-loop requests (they carry tools); side requests
	// (titles, topic detection) are answered with a short text.
	Main bool
	// N is the main-request number (1-based), 0 for other requests.
	N int
	// Tail is the JSON of the conversation items after the last assistant
	// output: what the client added since the model last spoke (the user
	// prompt, tool results, hook feedback).
	Tail string
	// Tools names the tools the request offers.
	Tools []string
	// Reply is what the fake answered to a main request.
	Reply Reply
}

// Server is a fake model API on 127.0.0.1.
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT).
	URL string

	t      testing.TB
	script Script
	mu     sync.Mutex
	log    []*Request
	main   int
}

// Log returns a copy of the request log.
func (s *Server) Log() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.log...)
}

// Main returns the main requests in order.
func (s *Server) Main() []*Request {
	var out []*Request
	for _, r := range s.Log() {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(r *http.Request, main bool, tail string, tools []string, body []byte) *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := &Request{Method: r.Method, Path: r.URL.Path, Body: body, Main: main, Tail: tail, Tools: tools}
	if main {
		s.main++
		req.N = s.main
	}
	s.log = append(s.log, req)
	return req
}

func start(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (e sse) send(name string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Usage is what a fake API reports for one request.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// UsageFor is the usage reported for the n-th request a fake API logged
// (1-based, side requests included): distinct per request, so that a sum
// read back from a transcript tells which requests it covers.
func UsageFor(n int) Usage {
	k := int64(n)
	return Usage{Input: 100 + k, Output: 10*k + 3, CacheRead: 1000 * k, CacheWrite: 7 * k}
}

// ---------------------------------------------------------------- Anthropic

// NewAnthropic starts a fake Anthropic Messages API: POST /v1/messages
// (SSE), POST /v1/messages/count_tokens, 404 for other /v1 paths and 200 {}
// for anything else (probes).
func NewAnthropic(t testing.TB, script Script) *Server {
	s := &Server{t: t, script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/v1/messages/count_tokens":
			s.record(r, false, "", nil, body)
			writeJSON(w, map[string]any{"input_tokens": 100})
		case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
			s.anthropicMessages(w, r, body)
		case strings.HasPrefix(r.URL.Path, "/v1/"):
			s.record(r, false, "", nil, body)
			http.NotFound(w, r)
		default:
			s.record(r, false, "", nil, body)
			writeJSON(w, map[string]any{})
		}
	})
	s.URL = start(t, mux)
	return s
}

// rawJSON encodes v without HTML escaping, so "<hook_prompt" stays readable.
// Escapes already in the client's JSON (\u003c) are undone too.
func rawJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	r := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
	return strings.TrimSpace(r.Replace(b.String()))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("content-type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

type anthropicReq struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request, body []byte) {
	var in anthropicReq
	if err := json.Unmarshal(body, &in); err != nil {
		s.record(r, false, "", nil, body)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range in.Tools {
		tools = append(tools, t.Name)
	}
	// The tail: messages after the last assistant message.
	last := -1
	for i, m := range in.Messages {
		var role struct {
			Role string `json:"role"`
		}
		_ = json.Unmarshal(m, &role)
		if role.Role == "assistant" {
			last = i
		}
	}
	tail := rawJSON(in.Messages[last+1:])
	main := len(tools) > 0
	req := s.record(r, main, tail, tools, body)
	reply := Reply{Text: `{"title": "Fake session", "isNewTopic": false}`}
	if main {
		reply = s.script(req.N, req)
		s.mu.Lock()
		req.Reply = reply
		s.mu.Unlock()
	}
	id := fmt.Sprintf("msg_fake%04d", len(s.Log()))
	// Distinct usage per request, so that sums read back from transcripts
	// can be checked against what the API said (see Usage).
	u := UsageFor(len(s.Log()))
	usage := map[string]any{"input_tokens": u.Input, "output_tokens": 1, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead}
	var block map[string]any
	stop := "end_turn"
	if reply.Shell != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": "Bash", "input": map[string]any{"command": reply.Shell, "description": "run bd"}}
	} else {
		block = map[string]any{"type": "text", "text": reply.Text}
	}
	if !in.Stream {
		usage["output_tokens"] = u.Output
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": in.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": in.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if reply.Shell != "" {
		input, _ := json.Marshal(block["input"])
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": "Bash", "input": map[string]any{}}})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.send("ping", map[string]any{"type": "ping"})
		// Split the text over two deltas, as real streams do.
		half := len(reply.Text) / 2
		for _, part := range []string{reply.Text[:half], reply.Text[half:]} {
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part}})
		}
	}
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.Output}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// ------------------------------------------------------------------- OpenAI

// NewOpenAI starts a fake OpenAI Responses API: POST /v1/responses (SSE).
func NewOpenAI(t testing.TB, script Script) *Server {
	s := &Server{t: t, script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/responses" && r.Method == http.MethodPost {
			s.openaiResponses(w, r, body)
			return
		}
		s.record(r, false, "", nil, body)
		http.NotFound(w, r)
	})
	s.URL = start(t, mux)
	return s
}

type openaiReq struct {
	Input []json.RawMessage `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request, body []byte) {
	var in openaiReq
	if err := json.Unmarshal(body, &in); err != nil {
		s.record(r, false, "", nil, body)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range in.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		tools = append(tools, name)
	}
	last := -1
	for i, m := range in.Input {
		var it struct {
			Type string `json:"type"`
			Role string `json:"role"`
		}
		_ = json.Unmarshal(m, &it)
		if it.Role == "assistant" || it.Type == "function_call" || it.Type == "local_shell_call" || it.Type == "custom_tool_call" {
			last = i
		}
	}
	tail := rawJSON(in.Input[last+1:])
	// Side requests (thread titles) carry no tools.
	main := len(tools) > 0
	req := s.record(r, main, tail, tools, body)
	reply := Reply{Text: "Fake session title"}
	if main {
		reply = s.script(req.N, req)
		s.mu.Lock()
		req.Reply = reply
		s.mu.Unlock()
	}
	n := len(s.Log())
	respID := fmt.Sprintf("resp_fake_%d", n)
	e := newSSE(w)
	e.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	if reply.Shell != "" {
		item := codexShellCall(tools, reply.Shell, n)
		e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
		e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	} else {
		msgID := fmt.Sprintf("msg_fake_%d", n)
		e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0,
			"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		half := len(reply.Text) / 2
		for _, part := range []string{reply.Text[:half], reply.Text[half:]} {
			e.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": msgID, "output_index": 0, "content_index": 0, "delta": part})
		}
		e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0,
			"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}}}})
	}
	u := UsageFor(n)
	e.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID, "usage": map[string]any{"input_tokens": u.Input + u.CacheRead,
			"input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
			"output_tokens":        u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": u.Input + u.CacheRead + u.Output}}})
}

// codexShellCall builds a function call for whichever shell tool the request
// offers (the name and argument shape changed across Codex versions).
func codexShellCall(tools []string, command string, n int) map[string]any {
	has := func(name string) bool {
		for _, t := range tools {
			if t == name {
				return true
			}
		}
		return false
	}
	var name string
	var args any
	switch {
	case has("exec_command"):
		// login:false: a login shell would reset PATH from /etc/profile.
		name, args = "exec_command", map[string]any{"cmd": command, "login": false}
	case has("shell_command"):
		name, args = "shell_command", map[string]any{"command": command}
	default:
		name, args = "shell", map[string]any{"command": []string{"bash", "-lc", command}}
	}
	a, _ := json.Marshal(args)
	return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
		"name": name, "arguments": string(a), "status": "completed"}
}

// ------------------------------------------------------------------- Gemini

// geminiModel is the model the fake Gemini API reports (modelVersion).
const geminiModel = "gemini-2.5-flash"

// NewGemini starts a fake Gemini API (generativelanguage v1beta), the
// wire format Gemini CLI 0.61 accepts: POST …/models/M:streamGenerateContent?alt=sse with
// tools is a main turn (SSE, one GenerateContentResponse per event);
// :generateContent and streams without tools are side calls (the loop
// detector's check), answered "no loop"; :countTokens gives a total; any
// other path is a 404 in Google's error shape.
func NewGemini(t testing.TB, script Script) *Server {
	s := &Server{t: t, script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, method, _ := strings.Cut(r.URL.Path, ":")
		switch {
		case r.Method == http.MethodPost && (method == "streamGenerateContent" || method == "generateContent"):
			s.geminiGenerate(w, r, body, method == "streamGenerateContent")
		case r.Method == http.MethodPost && method == "countTokens":
			s.record(r, false, "", nil, body)
			writeJSON(w, map[string]any{"totalTokens": 100})
		default:
			s.record(r, false, "", nil, body)
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"code": 404, "message": "fake Gemini API: no " + r.URL.Path, "status": "NOT_FOUND"}})
		}
	})
	s.URL = start(t, mux)
	return s
}

type geminiReq struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func (s *Server) geminiGenerate(w http.ResponseWriter, r *http.Request, body []byte, stream bool) {
	var in geminiReq
	if err := json.Unmarshal(body, &in); err != nil {
		s.record(r, false, "", nil, body)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			tools = append(tools, f.Name)
		}
	}
	// The tail: the contents after the model's last turn.
	last := -1
	for i, c := range in.Contents {
		if c.Role == "model" {
			last = i
		}
	}
	tail := rawJSON(in.Contents[last+1:])
	main := stream && len(tools) > 0
	req := s.record(r, main, tail, tools, body)
	var parts []any
	if main {
		reply := s.script(req.N, req)
		s.mu.Lock()
		req.Reply = reply
		s.mu.Unlock()
		if reply.Shell != "" {
			parts = []any{map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
				"args": map[string]any{"command": reply.Shell, "description": "run bd"}}}}
		} else {
			parts = []any{map[string]any{"text": reply.Text}}
		}
	} else {
		// The loop detector's question (and any other side call): no loop.
		parts = []any{map[string]any{"text": `{"unproductive_state_confidence": 0, "unproductive_state_analysis": "fake", "next_speaker": "user"}`}}
	}
	// Distinct usage per request (UsageFor). Gemini's promptTokenCount
	// includes the cached tokens; thinking is reported apart from the
	// candidates (thoughtsTokenCount, billed as output): n of the output.
	n := len(s.Log())
	u := UsageFor(n)
	usage := map[string]any{"promptTokenCount": u.Input + u.CacheRead, "cachedContentTokenCount": u.CacheRead,
		"candidatesTokenCount": u.Output - int64(n), "thoughtsTokenCount": n,
		"totalTokenCount": u.Input + u.CacheRead + u.Output}
	final := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
		"finishReason": "STOP", "index": 0}}, "usageMetadata": usage, "modelVersion": geminiModel,
		"responseId": fmt.Sprintf("resp_fake_%d", n)}
	if !stream {
		writeJSON(w, final)
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	// A text is split over two events, as real streams do; the last event
	// carries the finish reason and the usage.
	if text, ok := parts[0].(map[string]any)["text"].(string); ok && main && len(text) > 1 {
		half := len(text) / 2
		send(map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model",
			"parts": []any{map[string]any{"text": text[:half]}}}, "index": 0}}, "modelVersion": geminiModel})
		final["candidates"].([]any)[0].(map[string]any)["content"] = map[string]any{"role": "model",
			"parts": []any{map[string]any{"text": text[half:]}}}
	}
	send(final)
}
