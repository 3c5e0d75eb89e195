package headless

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
)

// A run is a record: its folder is 0700, its logs 0600, run.json names the
// process, and a run id already used is refused before anything starts.
func TestRunRecords(t *testing.T) {
	cfg, fb, _ := setup(t, "close", "")
	res, err := Run(context.Background(), Options{Config: cfg, Beads: fb, Environ: os.Environ(), RunID: "rec"})
	if err != nil || res.Code != engine.ExitOK {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for name, want := range map[string]os.FileMode{"": 0o700, "cycle-001.jsonl": 0o600, "cycle-001.stderr": 0o600, RunFile: 0o600} {
		fi, err := os.Stat(filepath.Join(res.Dir, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %o", name, fi.Mode(), err, want)
		}
	}
	st, err := ReadRun(res.Dir)
	if err != nil || st.PID != os.Getpid() || st.Status != "complete" {
		t.Errorf("run.json = %+v, %v", st, err)
	}
	before, _ := os.ReadFile(filepath.Join(res.Dir, RunFile))

	var out bytes.Buffer
	res, err = Run(context.Background(), Options{Config: cfg, Beads: fb, Environ: os.Environ(), RunID: "rec", Out: &out})
	if err == nil || res.Code != engine.ExitUsage || !strings.Contains(err.Error(), `run id "rec" is taken`) || !strings.Contains(err.Error(), "--run-id") {
		t.Fatalf("a reused run id: %+v, %v", res, err)
	}
	after, _ := os.ReadFile(filepath.Join(cfg.StateDir(), cfg.Run.Dir, "rec", RunFile))
	if !bytes.Equal(before, after) {
		t.Error("a refused run changed the earlier run's record")
	}
}

// max_cycles 0 is "no limit" for the stop hook; run names the key and the
// way out.
func TestRunNeedsACycleBound(t *testing.T) {
	cfg, fb, _ := setup(t, "close", "")
	cfg.Workflow.StopHook.MaxCycles = 0
	_, err := Run(context.Background(), Options{Config: cfg, Beads: fb})
	if err == nil || !strings.Contains(err.Error(), "workflow.stop_hook.max_cycles") || !strings.Contains(err.Error(), "--max-cycles N") {
		t.Fatalf("err = %v", err)
	}
}

// Lines longer than MaxLine are logged, not parsed, with one warning; the
// events around them are parsed.
func TestReadEventsSkipsLongLines(t *testing.T) {
	var logb bytes.Buffer
	var warnings bytes.Buffer
	r := &runner{o: Options{}, p: &progress{out: &bytes.Buffer{}, now: time.Now}}
	r.log = log.New(&warnings)
	r.log.SetLevel(log.DebugLevel)
	long := strings.Repeat("x", MaxLine+10)
	in := `{"type":"thread.started","thread_id":"t1"}` + "\n" + long + "\n" + long + "\n" +
		`{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}` + "\n" + `{"type":"turn.completed"}`
	var sum Summary
	r.readEvents(strings.NewReader(in), &logb, ParseCodex, &sum)
	if sum.SessionID != "t1" || sum.FinalMessage != "hi" || sum.Events != 3 {
		t.Errorf("summary = %+v", sum)
	}
	// Both long lines are skipped, not parsed; the warning is said once.
	if w := warnings.String(); strings.Count(w, "longer than the line cap") != 1 || strings.Contains(w, "not an event") {
		t.Errorf("log = %q", w)
	}
	if logb.Len() != len(in)+1 {
		t.Errorf("log holds %d bytes, want the stream's %d and a final newline", logb.Len(), len(in))
	}
}

// Clean strips what a terminal would act on.
func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":                    "plain text",
		"a\x1b]0;title\x07b":            "ab",
		"a\x1b]52;c;aGVsbG8=\x07b":      "ab",
		"\x1b[2J\x1b[31mred\x1b[0m":     "red",
		"bell\x07 back\b cr\r \u009b2J": "bell back cr  2J",
		"multi\nline\ttab":              "multi\nline\ttab",
		"rtl \u202eevil\u202c":          "rtl evil",
		"wide 日本 stays":                 "wide 日本 stays",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// The live line fits the width in columns, wide characters included.
func TestFit(t *testing.T) {
	for _, tt := range []struct {
		in   string
		cols int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "012345678…"},
		{"日本語日本語", 7, "日本語…"},
		{"x", 0, ""},
	} {
		if got := Fit(tt.in, tt.cols); got != tt.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tt.in, tt.cols, got, tt.want)
		}
	}
}

// failingTally is fakeBeads whose count fails (bd failing, or no such epic).
type failingTally struct{ *fakeBeads }

func (failingTally) Tally(context.Context, string) (beads.Tally, error) {
	return beads.Tally{}, &beads.Error{Kind: beads.KindNotFound, Msg: `no issue found matching "E"`}
}

// TestRunSetupErrors: what stops a run before any agent starts (the
// configuration, the flags, the agent's binary, bd or the epic) is a setup
// error, exit status 4, as run --help says; an agent that fails is 1.
func TestRunSetupErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*config.Config)
		beads func(*fakeBeads) Beads
		want  string
	}{
		{"no cycle bound", func(c *config.Config) { c.Workflow.StopHook.MaxCycles = 0 }, nil, "--max-cycles N"},
		{"no epic", func(c *config.Config) { c.Workflow.Epic = "" }, nil, "no epic"},
		{"no agent binary", func(c *config.Config) { c.Run.CodexBin = "no-such-codex" }, nil, "codex binary (run.codex_bin)"},
		{"unknown agent", func(c *config.Config) { c.Run.Agent = "aider" }, nil, `unknown agent "aider"`},
		{"no such epic", nil, func(fb *fakeBeads) Beads { return failingTally{fb} }, "no issue found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, fb, _ := setup(t, "close", "")
			if tc.edit != nil {
				tc.edit(cfg)
			}
			var bd Beads = fb
			if tc.beads != nil {
				bd = tc.beads(fb)
			}
			res, err := Run(context.Background(), Options{Config: cfg, Beads: bd, Out: io.Discard})
			if err == nil || !strings.Contains(err.Error(), tc.want) || res.Code != engine.ExitUsage {
				t.Errorf("Run = %+v, %v; want exit %d with %q", res, err, engine.ExitUsage, tc.want)
			}
		})
	}
}
