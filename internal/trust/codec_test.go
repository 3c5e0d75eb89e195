package trust

import (
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec/jsoncodectest"
)

// The generated codec of a trust record reads and writes what
// encoding/json does (the store writes it indented, through
// encoding/json).
func TestRecordCodec(t *testing.T) {
	jsoncodectest.Equivalent[Record](t, true,
		"{\n  \"root\": \"/p\",\n  \"sha256\": \"ab\",\n  \"file\": \"/p/project.yaml\",\n  \"trusted_at\": \"2026-11-27T04:00:00.123Z\"\n}",
		`{"root":"/p","trusted_at":null}`, `{"root":"/p","trusted_at":"now"}`, `{"root":1}`)
}
