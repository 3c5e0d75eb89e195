package beads

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the bd JSON decoder, in both shapes a
// caller asks for (an issue list and one issue): it never panics, and when
// it accepts a list, the subtree walk and the blocked computation over it
// never panic and stay inside the list. An empty or whitespace answer is
// always an error, never an empty result.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"schema_version":1,"data":[{"id":"x-1","status":"open","parent":"x"}]}`))
	f.Add([]byte(`{"error":"no beads database found"}`))
	f.Add([]byte(`[{"id":"x-1","dependencies":[{"id":"x-2","status":"open","dependency_type":"blocks"}]}]`))
	f.Add([]byte(`[{"id":"x-1","created_at":"not a time"}]`))
	f.Add([]byte("Error: database locked\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, out []byte) {
		var list []Issue
		err := Decode(out, &list)
		if len(bytes.TrimSpace(out)) == 0 && err == nil {
			t.Fatal("empty output decoded without error")
		}
		if err == nil {
			sub := descendants(list, list, "x")
			if len(sub) > len(list) {
				t.Fatalf("descendants returned %d of %d issues", len(sub), len(list))
			}
			for _, is := range list {
				_ = is.Blocked()
				_ = is.ParentID()
			}
			if _, err := json.Marshal(list); err != nil {
				t.Fatalf("decoded list does not re-encode: %v", err)
			}
		}
		var one Issue
		_ = Decode(out, &one)
	})
}
