package report_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/report"
	"github.com/runtasks/runtasks/internal/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = reporttest.T0

func TestBuild(t *testing.T) {
	r := report.Build(reporttest.Fixture())
	if got := len(r.Cycles); got != 6 {
		t.Fatalf("cycles = %d, want 6 (other epics and ignored outcomes left out)", got)
	}
	if len(r.Sessions) != 2 || r.Sessions[0].ID != "s-alpha" || len(r.Sessions[0].Cycles) != 4 || r.Sessions[1].Closed != 2 {
		t.Errorf("sessions = %+v", r.Sessions)
	}
	wantMarks := []report.Mark{report.MarkCycle, report.MarkClosed, report.MarkRejected, report.MarkEscalated, report.MarkStuck, report.MarkComplete}
	wantClosed := []int{0, 1, 1, 0, 0, 2}
	for i, c := range r.Cycles {
		if c.Mark != wantMarks[i] || c.Closed != wantClosed[i] {
			t.Errorf("cycle %d: mark %s closed %d, want %s %d", c.Seq, c.Mark, c.Closed, wantMarks[i], wantClosed[i])
		}
	}
	if !r.Complete || r.Duration() != 120*time.Minute || r.Total != 4 || len(r.Done) != 4 || r.Stops != 6 {
		t.Errorf("complete %v in %s, total %d closed %d recorded %d", r.Complete, r.Duration(), r.Total, len(r.Done), r.Stops)
	}
	// Each closed task is counted at its holder's next decision.
	var done []string
	for _, d := range r.Done {
		done = append(done, fmt.Sprintf("%s@%s#%d", d.ID, d.Session, d.Seq))
	}
	if got := strings.Join(done, " "); got != "bd-e1.1@s-alpha#2 bd-e1.2@s-alpha#3 bd-e1.4@s-beta#6 bd-e1.3@s-beta#6" {
		t.Errorf("closed tasks = %s", got)
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
	if len(r.Runs) != 1 || r.Runs[0].Cycle != 2 || r.Runs[0].MaxCycles != 50 || r.ClosedBy(r.Runs[0].EngineSession) != 2 {
		t.Errorf("runs = %+v", r.Runs)
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		in   func() report.Input
		want []string
	}{
		{"complete", reporttest.Fixture, []string{
			"Epic bd-e1 (Ship the parser): complete in 2h00m (2026-03-02 09:00 to 2026-03-02 11:00 UTC).",
			"6 decision(s) in 2 session(s), 1 runtasks run(s).",
			"Tasks: 4 of 4 closed in beads.",
			"Tokens: 98.6k, cost $0.51 (+6.2k unpriced tokens).",
			"Marked: 1 rejected, 1 escalated, 1 stuck.",
		}},
		{"not complete", func() report.Input {
			in := reporttest.Fixture()
			in.Records = slices.Clone(in.Records[:5])
			in.Records[1].Usage = nil
			return in
		}, []string{
			"Epic bd-e1 (Ship the parser): not complete after 44m00s; last: escalated",
			"Tasks: 4 of 4 closed in beads.",
			"Tokens: 48.3k, cost $0.26 (1 of 4 decisions not recorded).",
			"Last reason: only blocked work remains: bd-e1.3 blocked",
		}},
		{"no usage recorded", func() report.Input {
			in := reporttest.Fixture()
			in.Records = slices.Clone(in.Records)
			for i := range in.Records {
				in.Records[i].Usage = nil
			}
			return in
		}, []string{"Tokens: not recorded."}},
		{"empty", func() report.Input { return report.Input{Epic: "bd-none", Now: t0} }, []string{"Epic bd-none: no decisions recorded."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := report.Build(tt.in()).Summary()
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
	if err := report.Render(&buf, report.Build(reporttest.Fixture())); err != nil {
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
	if err := report.Render(&buf, report.Build(report.Input{Epic: "bd-none", Now: t0, Loc: time.UTC})); err != nil {
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
