package orchestrator

import (
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec/jsoncodectest"
)

// The generated codecs of the state and the decision record read and
// write what encoding/json does (writeAtomic writes the state without
// HTML escapes; Append writes a record with them, as json.Marshal does).
func TestStateCodec(t *testing.T) {
	jsoncodectest.Equivalent[State](t, false,
		`{"session":"s","epic":"e","cycles":3,"first_block_at":"2026-11-27T02:19:57.036458233Z","last":{"time":"2026-11-27T04:02:01Z","outcome":"continue","block":true,"counts":{"ready":2,"in_progress":-1}},"spent":{"input":5,"cost_usd":0.25,"models":["m"]},"usage_mark":{"path":"/t","offset":9}}`,
		`{"session":"s","epic":"e","last":null,"worktrees":[],"spent":{},"usage_mark":null}`,
		`{"session":"s","cycles":1.5}`, `{"session":"s","cycles":"3"}`, `{"session":"s","cycles":1e3}`,
		`{"session":"s","first_block_at":"yesterday"}`, `{"session":"\ud83d\ude00 \u00e9 \"q\" \/"}`,
		`{"session":"s"} x`, `{"session":"s",}`, `{"session":"s"`, `[]`, `"s"`, `null`, ``, ` `)
}

func TestRecordCodec(t *testing.T) {
	jsoncodectest.Equivalent[Record](t, true,
		`{"time":"2026-11-27T04:02:01.367307385Z","session":"s-1","epic":"bd-e","agent":"claude","event":"Stop","outcome":"continue","block":true,"cycle":8,"max":100,"why":"work remains: 2 ready","counts":{"ready":2,"in_progress":-1,"blocked":-1,"deferred":-1,"open":-1,"remaining":-1}}`,
		`{"time":"2026-11-27T04:02:01Z","actions":null,"usage":{"cost_usd":1e-7}}`)
}
