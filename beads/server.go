package beads

import (
	"context"
	"encoding/json"
)

// Store modes, as bd v1.3.0's `bd dolt status --json` tells them.
const (
	// ModeEmbedded: Dolt runs inside every bd process (.beads/embeddeddolt).
	ModeEmbedded = "embedded"
	// ModeExternal: bd talks to a Dolt SQL server it does not manage (bd
	// init --server --external, a remote host, or dolt.auto-start off).
	ModeExternal = "external"
	// ModeManaged: bd talks to a local Dolt SQL server it starts itself (bd
	// init --server without --external).
	ModeManaged = "managed"
)

// ServerStatus is where a store lives and whether its server answers.
type ServerStatus struct {
	Mode string
	// Running: the external server answered a ping, or the managed one's
	// pid is alive; false in embedded mode.
	Running  bool
	Host     string
	Port     int
	Database string
	User     string
	// Version is the server's @@version when it answered.
	Version string
	// Error is why an external server did not answer (bd's words).
	Error string
	// DataDir is the embedded store, or the managed server's data.
	DataDir string
}

// Server asks bd where its store lives (bd dolt status --json). For an
// external server bd pings it (5 s at most).
func (c *Client) Server(ctx context.Context) (ServerStatus, error) {
	var v struct {
		Mode     string `json:"mode"`
		Running  bool   `json:"running"`
		Host     string `json:"host"`
		Port     int    `json:"port"`
		Database string `json:"database"`
		User     string `json:"user"`
		Version  string `json:"version"`
		Error    string `json:"error"`
		DataDir  string `json:"data_dir"`
		PID      int    `json:"pid"`
	}
	args := []string{"dolt", "status", "--json"}
	out, err := c.run(ctx, args)
	if err != nil {
		return ServerStatus{}, err
	}
	// Not Decode: an unreachable server's status carries an "error" field
	// that is an answer, not bd failing.
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(out, &env) == nil && len(env.Data) > 0 {
		out = env.Data
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return ServerStatus{}, &Error{Kind: KindBadOutput, Args: args, Msg: snippet(out), Err: err}
	}
	s := ServerStatus{Mode: v.Mode, Running: v.Running, Host: v.Host, Port: v.Port, Database: v.Database,
		User: v.User, Version: v.Version, Error: v.Error, DataDir: v.DataDir}
	if s.Mode == "" {
		// A bd-managed server's pid file state: {running, pid, port, data_dir}.
		s.Mode = ModeManaged
		if s.Host == "" {
			s.Host = "127.0.0.1"
		}
	}
	return s, nil
}
