package install

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
)

// CodexTrust trusts runtasks' hooks through `codex app-server` JSON-RPC,
// as Codex's review dialog does (hooks/list, then config/batchWrite).
type CodexTrust struct {
	// Bin is the codex binary; Env its environment (CODEX_HOME applies).
	Bin string
	Env []string
	// Dir is the project directory passed to hooks/list.
	Dir string
	// Timeout bounds the whole exchange (default 30s).
	Timeout time.Duration
}

// codexHook is one item of hooks/list's answer.
type codexHook struct {
	Key         string `json:"key"`
	Command     string `json:"command"`
	IsManaged   bool   `json:"isManaged"`
	TrustStatus string `json:"trustStatus"`
	CurrentHash string `json:"currentHash"`
}

// Trust runs the exchange for the hooks of settings.
func (c CodexTrust) Trust(ctx context.Context, settings string, isOurs func(string) bool) (*TrustReport, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(c.Timeout, 30*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, "app-server")
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	// codex and whatever it starts run in their own process group, stopped
	// with it (the timeout, the end of the exchange).
	g := shell.NewContextGroup(cmd, shell.Terminate, time.Second)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start codex app-server: %w", err)
	}
	defer func() {
		stdin.Close()
		t := time.AfterFunc(3*time.Second, g.Kill)
		cmd.Wait()
		t.Stop()
		g.Reap()
	}()

	rd := bufio.NewReaderSize(stdout, 1<<20)
	send := json.NewEncoder(stdin).Encode
	// call sends a request and waits for its response, skipping
	// notifications and server requests.
	call := func(id int, method string, params any) (json.RawMessage, error) {
		if err := send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
			return nil, fmt.Errorf("codex app-server %s: %w", method, err)
		}
		for {
			line, err := rd.ReadBytes('\n')
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(line, &msg) == nil && msg.Method == "" && string(msg.ID) == fmt.Sprint(id) {
				if msg.Error != nil {
					return nil, fmt.Errorf("codex app-server %s: %s", method, msg.Error.Message)
				}
				return msg.Result, nil
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("codex app-server %s: %w", method, ctx.Err())
				}
				return nil, fmt.Errorf("codex app-server %s: no answer (%v)", method, err)
			}
		}
	}

	if _, err := call(1, "initialize", map[string]any{"clientInfo": map[string]string{"name": "runtasks", "version": "1"}}); err != nil {
		return nil, err
	}
	if err := send(map[string]any{"method": "initialized"}); err != nil {
		return nil, err
	}
	raw, err := call(2, "hooks/list", map[string]any{"cwds": []string{c.Dir}})
	if err != nil {
		return nil, err
	}
	// {"data": [{"cwd": …, "hooks": [codexHook…]}]}
	var list struct {
		Data []struct {
			Hooks []codexHook `json:"hooks"`
		} `json:"data"`
	}
	json.Unmarshal(raw, &list) // another shape lists none
	var hooks []codexHook
	for _, d := range list.Data {
		hooks = append(hooks, d.Hooks...)
	}
	slices.SortFunc(hooks, func(a, b codexHook) int { return strings.Compare(a.Key, b.Key) })
	hooks = slices.CompactFunc(hooks, func(a, b codexHook) bool { return a.Key == b.Key })
	rep := &TrustReport{}
	var edits []map[string]any
	for _, h := range hooks {
		switch {
		case h.IsManaged || h.TrustStatus == "managed" || !isOurs(h.Command) || !keyInFile(h.Key, settings):
		case h.TrustStatus == "trusted":
			rep.Already = append(rep.Already, h.Key)
		case h.CurrentHash != "":
			edits = append(edits, map[string]any{
				"keyPath":       fmt.Sprintf("hooks.state.%q.trusted_hash", h.Key),
				"mergeStrategy": "upsert",
				"value":         h.CurrentHash,
			})
			rep.Trusted = append(rep.Trusted, h.Key)
		}
	}
	if len(edits) > 0 {
		if _, err := call(3, "config/batchWrite", map[string]any{"edits": edits, "reloadUserConfig": true}); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// keyInFile reports whether a hook key (<file>:<event>:<group>:<handler>)
// names settings.
func keyInFile(key, settings string) bool {
	// The file part may itself hold colons (Windows drive letters): cut
	// the three trailing fields.
	parts := strings.Split(key, ":")
	if len(parts) < 4 {
		return false
	}
	key = strings.Join(parts[:len(parts)-3], ":")
	if filepath.Clean(key) == filepath.Clean(settings) {
		return true
	}
	rk, err1 := filepath.EvalSymlinks(key)
	rs, err2 := filepath.EvalSymlinks(settings)
	return err1 == nil && err2 == nil && rk == rs
}
