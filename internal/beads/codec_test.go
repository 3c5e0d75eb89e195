package beads

import (
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec/jsoncodectest"
)

// The generated decoder of bd's issues reads what encoding/json reads,
// in the shapes bd v1.3.0 prints (list and ready rows, show's embedded
// issues, the fields runtasks leaves aside).
func TestIssueCodec(t *testing.T) {
	jsoncodectest.Decodes[wireIssues](t,
		`[{"id":"bd-e.1","title":"First","description":"d","status":"open","priority":2,"issue_type":"task","owner":"o","created_at":"2026-11-20T10:00:00Z","created_by":"x","updated_at":"2026-11-20T10:00:00.5Z","dependencies":[{"issue_id":"bd-e.1","depends_on_id":"bd-e","type":"parent-child","created_at":"2026-11-20T10:00:00Z","created_by":"x","metadata":"{}"}],"dependency_count":1,"dependent_count":0,"comment_count":0,"parent":"bd-e"}]`,
		`[{"id":"bd-e","title":"Epic","status":"open","priority":1,"issue_type":"epic","dependencies":[{"id":"bd-e.2","title":"t","status":"closed","dependency_type":"blocks"}],"labels":["a","b"],"lease_expires_at":null,"closed_at":"2026-11-21T00:00:00Z","close_reason":"done"}]`,
		`[]`, `null`, `[null]`, `[{}]`, `[{"priority":"2"}]`, `[{"priority":2.0}]`, `[{"created_at":""}]`, `[{"dependencies":{}}]`, `{"id":"x"}`, `[{"id":"x"},]`)
	jsoncodectest.Decodes[wireIssue](t, `{"id":"x","blocked_by":["y"]}`, `{"id":"x","dependencies":null}`)
}
