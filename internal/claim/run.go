package claim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/runtasks/runtasks/internal/prompts"
	"github.com/runtasks/runtasks/internal/state"
)

// RunData fills the run-folder templates (prompts/run, or claim.templates):
// the claim, its acceptance criteria one item a line, and ClaimedAt in
// RFC 3339 (UTC).
type RunData struct {
	Result
	Checklist []string
	ClaimedAt string
}

// RunID names a run folder: run-YYYYMMDD-HHMMSS-<task id> (UTC).
func RunID(task string, at time.Time) string {
	return "run-" + at.UTC().Format("20060102-150405") + "-" + state.SafeName(task, 80, "._-")
}

// Checklist splits acceptance criteria into items: one a non-empty line,
// without list markers ("-", "*", "1.", "- [ ]").
func Checklist(criteria string) []string {
	var out []string
	for _, line := range strings.Split(criteria, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"- [ ]", "- [x]", "* [ ]", "-", "*", "+"} {
			if strings.HasPrefix(line, p) {
				line = strings.TrimSpace(line[len(p):])
				break
			}
		}
		if i := strings.IndexAny(line, ".)"); i > 0 && i <= 3 && strings.Trim(line[:i], "0123456789") == "" {
			line = strings.TrimSpace(line[i+1:])
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

var funcs = template.FuncMap{
	// yaml renders a string as a double-quoted YAML scalar (JSON strings
	// are valid YAML).
	"yaml": func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	},
}

func runData(res Result, runID string) RunData {
	res.RunID = runID
	return RunData{Result: res, Checklist: Checklist(res.Task.AcceptanceCriteria), ClaimedAt: res.ClaimedAt.Format(time.RFC3339)}
}

// renderAll renders every run-folder template. Claim renders them once
// before it claims, so that a broken template changes nothing in beads.
func renderAll(templates string, d RunData) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range prompts.RunFiles {
		src, err := prompts.RunTemplate(templates, f.Name)
		if err != nil {
			return nil, err
		}
		t, err := template.New(f.Name).Funcs(funcs).Option("missingkey=error").Parse(src)
		var buf bytes.Buffer
		if err == nil {
			err = t.Execute(&buf, d)
		}
		if err != nil {
			return nil, fmt.Errorf("run template %s: %w", f.Name, err)
		}
		out[f.Name] = buf.Bytes()
	}
	return out, nil
}

// writeRun creates the run folder exclusively (a second claim in the same
// second gets a -2 suffix) and writes the rendered files.
func writeRun(r Request, res *Result) (state.ClaimedRun, error) {
	runID := RunID(res.Task.ID, res.ClaimedAt)
	parent := cmp.Or(r.RunsDir, "runs")
	if !filepath.IsAbs(parent) {
		parent = filepath.Join(r.Root, parent)
	}
	if err := state.MkdirIgnored(parent); err != nil {
		return state.ClaimedRun{}, err
	}
	dir := filepath.Join(parent, runID)
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 101 {
			return state.ClaimedRun{}, err
		}
		dir = filepath.Join(parent, fmt.Sprintf("%s-%d", runID, i))
	}
	contents, err := renderAll(r.Templates, runData(*res, filepath.Base(dir)))
	if err != nil {
		os.RemoveAll(dir)
		return state.ClaimedRun{}, err
	}
	res.RunID, res.RunDir, res.Files = filepath.Base(dir), dir, nil
	for _, f := range prompts.RunFiles {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, contents[f.Name], 0o644); err != nil {
			return state.ClaimedRun{}, err
		}
		res.Files = append(res.Files, p)
	}
	return state.ClaimedRun{
		Task: res.Task.ID, RunDir: dir, ClaimedAt: res.ClaimedAt,
		ResultsSHA256: state.ResultsDigest(contents[state.ResultsFile]),
	}, nil
}
