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
// server answers: bd dolt show --json's fields.
type ServerStatus struct {
	Mode string `json:"-"`
	// Answers: bd connected to the server (false in embedded mode).
	Answers  bool   `json:"connection_ok"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Database string `json:"database"`
	User     string `json:"user"`
	TLS      bool   `json:"tls"`
}

// Server asks bd where its store lives and, in server mode, connects to
// the server (bd dolt show --json; bd answers rc 0 either way).
func (c *Client) Server(ctx context.Context) (ServerStatus, error) {
	v, err := query[struct {
		ServerStatus
		Embedded bool `json:"embedded"`
	}](ctx, c, nil, "dolt", "show", "--json")
	if err != nil {
		return ServerStatus{}, err
	}
	v.Mode = ModeServer
	if v.Embedded {
		v.Mode = ModeEmbedded
	}
	return v.ServerStatus, nil
}
