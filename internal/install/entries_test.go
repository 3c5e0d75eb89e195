package install

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/runtasks/runtasks/internal/hook"
)

// TestEntriesEpic: the --epic an installed hook passes, as install writes
// it (quoted) and as a person may (--epic=E, a quoted path with a space).
func TestEntriesEpic(t *testing.T) {
	o := Options{Agent: hook.Claude, Global: true, Executable: "/opt/run tasks/runtasks", Epic: "bd-a1"}
	settings := `{
  // a person's comment
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": ` + jsonString(Command(o, StopHook)) + `}]}],
    "SubagentStop": [{"hooks": [{"type": "command", "command": "runtasks stop-hook --epic=bd-b2"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ` + jsonString(Command(o, "prompt-hook")) + `}]}]
  }
}`
	entries, err := Entries(hook.Claude, []byte(settings))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Event+"="+e.Epic+"@"+e.Program)
	}
	slices.Sort(got)
	want := []string{"Stop=bd-a1@/opt/run tasks/runtasks", "SubagentStop=bd-b2@runtasks", "UserPromptSubmit=@/opt/run tasks/runtasks"}
	if !slices.Equal(got, want) {
		t.Errorf("entries = %q, want %q", got, want)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
