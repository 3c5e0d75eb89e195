package beads

import (
	"context"
)

// Store modes (bd v1.3.0; docs/scale.md).
const (
	// ModeEmbedded: Dolt runs inside every bd process (.beads/embeddeddolt).
	ModeEmbedded = "embedded"
	// ModeServer: bd talks to a Dolt SQL server over the MySQL protocol
	// (bd init --server), which any number of machines can share.
	ModeServer = "server"
)

// ServerStatus is where a store lives and, in server mode, whether its
// server answers.
type ServerStatus struct {
	Mode string
	// Answers: bd connected to the server (false in embedded mode).
	Answers  bool
	Host     string
	Port     int
	Database string
	User     string
	TLS      bool
	// Shared: bd's one-server-per-machine mode (--shared-server).
	Shared bool
	// DataDir is the embedded store's directory.
	DataDir string
}

// Server asks bd where its store lives and, in server mode, connects to
// the server (bd dolt show --json; bd answers rc 0 either way).
func (c *Client) Server(ctx context.Context) (ServerStatus, error) {
	var v struct {
		Embedded     bool   `json:"embedded"`
		ConnectionOK bool   `json:"connection_ok"`
		Host         string `json:"host"`
		Port         int    `json:"port"`
		Database     string `json:"database"`
		User         string `json:"user"`
		TLS          bool   `json:"tls"`
		Shared       bool   `json:"shared_server"`
		DataDir      string `json:"data_dir"`
	}
	if err := c.query(ctx, &v, "dolt", "show", "--json"); err != nil {
		return ServerStatus{}, err
	}
	s := ServerStatus{Mode: ModeServer, Answers: v.ConnectionOK, Host: v.Host, Port: v.Port, Database: v.Database,
		User: v.User, TLS: v.TLS, Shared: v.Shared, DataDir: v.DataDir}
	if v.Embedded {
		s.Mode = ModeEmbedded
	}
	return s, nil
}
