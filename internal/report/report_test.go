package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = reporttest.T0

// Fixture is the report's fixture (package reporttest).
func Fixture() Input {
	f := reporttest.Fixture()
	return Input{Epic: f.Epic, Records: f.Records, Runs: f.Runs, Now: f.Now, Loc: time.UTC}
}

func TestBuild(t *testing.T) {
	r := Build(Fixture())
	if got := len(r.Cycles); got != 6 {
		t.Fatalf("cycles = %d, want 6 (other epics and ignored outcomes left out)", got)
	}
	if len(r.Sessions) != 2 || r.Sessions[0].ID != "s-alpha" || len(r.Sessions[0].Cycles) != 4 || r.Sessions[1].Closed != 2 {
		t.Errorf("sessions = %+v", r.Sessions)
	}
	wantMarks := []Mark{MarkCycle, MarkClosed, MarkRejected, MarkEscalated, MarkStuck, MarkComplete}
	wantClosed := []int{0, 1, 1, 0, 0, 2}
	for i, c := range r.Cycles {
		if c.Mark != wantMarks[i] || c.Closed != wantClosed[i] {
			t.Errorf("cycle %d: mark %s closed %d, want %s %d", c.Seq, c.Mark, c.Closed, wantMarks[i], wantClosed[i])
		}
	}
	if !r.Complete || r.Duration() != 120*time.Minute || r.Seen != 4 || r.Remaining != 0 || r.Closed != 4 {
		t.Errorf("complete %v in %s, seen %d remaining %d closed %d", r.Complete, r.Duration(), r.Seen, r.Remaining, r.Closed)
	}
	if got, want := r.Spent.Cost, 0.05+0.21+0.18+0.03+0.04; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
	if r.Spent.Unpriced != 6200 {
		t.Errorf("unpriced = %d, want 6200", r.Spent.Unpriced)
	}
	// Tasks, costliest first.
	var ids []string
	for _, k := range r.Tasks {
		ids = append(ids, k.Task)
	}
	if got := strings.Join(ids, ","); got != "bd-e1.1,bd-e1.2,bd-e1.4" {
		t.Errorf("tasks = %s", got)
	}
	if len(r.Runs) != 1 || r.Runs[0].Cycle != 2 || r.Runs[0].MaxCycles != 50 {
		t.Errorf("runs = %+v", r.Runs)
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		in   func() Input
		want []string
	}{
		{"complete", Fixture, []string{
			"Epic bd-e1: complete in 2h00m (2026-03-02 09:00 to 2026-03-02 11:00 UTC).",
			"6 decision(s) in 2 session(s), 1 runtasks run(s).",
			"Tasks: 4 closed of 4 counted, 0 left.",
			"Tokens: 98.6k, cost $0.51 (+6.2k unpriced tokens).",
			"Marked: 1 rejected, 1 escalated, 1 stuck.",
		}},
		{"not complete", func() Input {
			in := Fixture()
			in.Records = in.Records[:5]
			return in
		}, []string{
			"Epic bd-e1: not complete after 44m00s; last: escalated",
			"Tasks: 2 closed of 4 counted, 2 left.",
			"Last reason: only blocked work remains: bd-e1.3 blocked",
		}},
		{"empty", func() Input { return Input{Epic: "bd-none", Now: t0} }, []string{"Epic bd-none: no decisions recorded."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(tt.in()).Summary()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestRenderGolden compares the page with testdata/report.golden.html
// (go test ./report -run Golden -update rewrites it).
func TestRenderGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, Build(Fixture())); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.html", buf.Bytes())
	page := buf.String()
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import", "url("} {
		if bad == "http://" {
			// Only SVG's namespace URI, which is a name, not a fetch.
			page = strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
		}
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must be self-contained and the log's text escaped", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the reason's markup is not escaped as text")
	}
}

func TestRenderEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, Build(Input{Epic: "bd-none", Now: t0, Loc: time.UTC})); err != nil {
		t.Fatal(err)
	}
	golden(t, "empty.golden.html", buf.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the page rendered (go test ./report -update rewrites it); got:\n%s", path, got)
	}
}
