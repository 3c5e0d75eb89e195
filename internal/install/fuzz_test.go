package install

import (
	"bytes"
	"testing"

	"github.com/runtasks/runtasks/internal/hook"
)

// FuzzInstallUninstall: for any settings file install accepts, installing
// (twice) and uninstalling gives back the original bytes, for every agent;
// a file it refuses is an error, never a panic.
func FuzzInstallUninstall(f *testing.F) {
	for _, agent := range hook.Agents {
		for _, c := range corpus(agent) {
			if c != missing {
				f.Add([]byte(c))
			}
		}
	}
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[]},],},}`))
	f.Add([]byte("{\"a\":[],\"hooks\":{\"stop\":[/*x*/]}/*y*/}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(bytes.TrimSpace(data)) == 0 {
			return // a blank file is put back by the file layer (TestRoundTripCorpus)
		}
		for _, agent := range hook.Agents {
			o := Options{Agent: agent, Executable: exe, Epic: "bd-1", LoopLimit: 5}
			d, err := parseDoc(data)
			if err != nil {
				return
			}
			rec, err := d.install(o, nil)
			if err != nil {
				continue
			}
			installed := d.root.Pack()
			d2, err := parseDoc(installed)
			if err != nil {
				t.Fatalf("%s: install wrote a file it cannot read: %v\n%s", agent, err, installed)
			}
			rec2, err := d2.install(o, rec)
			if err != nil {
				t.Fatalf("%s: second install: %v", agent, err)
			}
			if again := d2.root.Pack(); !bytes.Equal(again, installed) {
				t.Fatalf("%s: second install changed the file:\n%s\n---\n%s", agent, installed, again)
			}
			d3, _ := parseDoc(installed)
			d3.remove(rec2)
			if got := d3.root.Pack(); !bytes.Equal(got, data) {
				t.Fatalf("%s: round trip:\n%q\ninstalled:\n%q\nuninstalled:\n%q", agent, data, installed, got)
			}
		}
	})
}
