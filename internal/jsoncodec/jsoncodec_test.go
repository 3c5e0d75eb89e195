package jsoncodec_test

import (
	"encoding/json"
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec"
	"github.com/runtasks/runtasks/internal/trust"
)

// Invalid JSON is refused with encoding/json's error, also where the
// generated decoder alone would take it (a number with a leading zero).
func TestUnmarshalSyntaxErrors(t *testing.T) {
	for _, in := range []string{`{"root":"/p","trusted_at":01}`, `{"root":"/p"`, ``, `{"root":"/p"} {}`, `{"root":'p'}`} {
		var got trust.Record
		err := jsoncodec.Unmarshal([]byte(in), &got)
		var want any
		werr := json.Unmarshal([]byte(in), &want)
		if err == nil || werr == nil || err.Error() != werr.Error() {
			t.Errorf("%q: error %v, want encoding/json's %v", in, err, werr)
		}
	}
}
