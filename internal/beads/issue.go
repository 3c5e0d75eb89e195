// Package beads runs the beads issue tracker (bd) and decodes its JSON.
// It is the only package in runtasks that executes bd.
package beads

import (
	"encoding/json"
	"slices"
	"time"
)

// Statuses built into bd v1.3.0.
const (
	StatusOpen       = "open"
	StatusInProgress = "in_progress"
	StatusBlocked    = "blocked"
	StatusDeferred   = "deferred"
	StatusClosed     = "closed"
	StatusPinned     = "pinned"
	StatusHooked     = "hooked"
)

// TypeEpic is the issue type of an epic (bd create --type epic).
const TypeEpic = "epic"

// Dependency is one row of an issue's dependencies as bd list/ready print
// them ({"issue_id","depends_on_id","type"}). bd show embeds the
// depended-on issues instead ({"id","status","dependency_type",…}); Decode
// makes rows of both shapes.
type Dependency struct {
	IssueID     string `json:"issue_id"`
	DependsOnID string `json:"depends_on_id"`
	Type        string `json:"type"`
	// Status of the depended-on issue, known only from bd show output.
	Status string `json:"status,omitempty"`
	// bd show's id and dependency_type, empty once Decode made the row.
	ID             string `json:"id,omitempty"`
	DependencyType string `json:"dependency_type,omitempty"`
}

// Issue is the subset of a bd issue that runtasks reads. Unknown fields are
// ignored; time fields are zero when bd leaves them out.
type Issue struct {
	ID                 string       `json:"id"`
	Title              string       `json:"title"`
	Description        string       `json:"description,omitempty"`
	Design             string       `json:"design,omitempty"`
	AcceptanceCriteria string       `json:"acceptance_criteria,omitempty"`
	Notes              string       `json:"notes,omitempty"`
	Status             string       `json:"status"`
	Priority           int          `json:"priority"`
	IssueType          string       `json:"issue_type,omitempty"`
	Assignee           string       `json:"assignee,omitempty"`
	Parent             string       `json:"parent,omitempty"`
	CreatedAt          time.Time    `json:"created_at,omitzero"`
	UpdatedAt          time.Time    `json:"updated_at,omitzero"`
	StartedAt          time.Time    `json:"started_at,omitzero"`
	ClosedAt           time.Time    `json:"closed_at,omitzero"`
	LeaseExpiresAt     time.Time    `json:"lease_expires_at,omitzero"`
	CloseReason        string       `json:"close_reason,omitempty"`
	Dependencies       []Dependency `json:"dependencies,omitempty"`
	Labels             []string     `json:"labels,omitempty"`
	// Metadata is bd's free JSON; its key verify is the task's own check (VerifyCommand).
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// BlockedBy lists open blockers; filled by bd blocked, or computed by
	// Client.Subtree from dependency rows.
	BlockedBy []string `json:"blocked_by,omitempty"`
}

// Dependency types runtasks reads.
const (
	DepBlocks      = "blocks"
	DepParentChild = "parent-child"
)

// ParentID is the issue's parent: the parent field, else its parent-child
// dependency.
func (is Issue) ParentID() string {
	if p := is.parentIDs(); len(p) > 0 {
		return p[0]
	}
	return ""
}

// parentIDs are all the issue's parents: the parent field and every
// parent-child dependency row (bd allows more than one), each once.
func (is Issue) parentIDs() []string {
	var out []string
	if is.Parent != "" {
		out = append(out, is.Parent)
	}
	for _, d := range is.Dependencies {
		if d.Type == DepParentChild && d.IssueID == is.ID && d.DependsOnID != "" && !slices.Contains(out, d.DependsOnID) {
			out = append(out, d.DependsOnID)
		}
	}
	return out
}

// Blocked reports whether the issue cannot be worked on now: its stored
// status is blocked, or it waits on open blockers.
func (is Issue) Blocked() bool { return is.Status == StatusBlocked || len(is.BlockedBy) > 0 }

// VerifyCommand is the task's own check: the string at key verify of its
// bd metadata (bd update X --set-metadata verify='go test ./pkg'); "": none.
func (is Issue) VerifyCommand() string {
	var m struct {
		Verify any `json:"verify"`
	}
	_ = json.Unmarshal(is.Metadata, &m)
	s, _ := m.Verify.(string)
	return s
}
