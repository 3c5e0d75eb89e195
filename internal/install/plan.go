package install

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/runtasks/runtasks"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/prompts"
)

// plan is one install or uninstall being worked out.
type plan struct {
	o      Options
	m      *manifest // the record (locked), as it will be after the change
	res    *Result
	holder string
}

func (o Options) manifestDir() string {
	return cmp.Or(o.ManifestDir, filepath.Join(o.Home, ".local", "state", "runtasks", "install"))
}

// root is the directory a scope's shared files and record belong to.
func (o Options) root() string {
	if o.Global {
		return o.Home
	}
	return o.ProjectDir
}

// change works out the install (or uninstall) and, unless a dry run,
// makes it.
func change(o Options, remove bool) (*Result, error) {
	settings, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	if o.root() == "" {
		return nil, errors.New("no home directory")
	}
	m, err := openManifest(o.manifestDir(), o.root(), !o.DryRun)
	if err != nil {
		return nil, err
	}
	defer m.lock.Close()
	holder := o.Agent
	if o.Global {
		holder += " --global"
	}
	p := &plan{o: o, m: m, res: &Result{Agent: o.Agent, Settings: settings}, holder: holder}
	if err = p.settings(settings, remove); err == nil {
		err = p.sharedFiles(remove)
	}
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		err = p.apply(remove)
	}
	return p.res, err
}

// Install merges runtasks' hooks into agent's settings and writes the skills and project.yaml.
func Install(ctx context.Context, o Options) (*Result, error) {
	if o.Global && !filepath.IsAbs(o.Executable) {
		return nil, fmt.Errorf("the runtasks binary must be an absolute path, not %q", o.Executable)
	}
	if strings.ContainsAny(o.Epic, "\n\r\x00") {
		return nil, errors.New("epic id holds a line break")
	}
	res, err := change(o, false)
	if err != nil {
		return res, err
	}
	var tr *TrustReport
	var trErr error
	if !o.DryRun && o.Agent == hook.Codex && o.Trust != nil {
		tr, trErr = o.Trust(ctx, res.Settings, o.installs)
	}
	res.Notes = append(res.Notes, notes(o, res.Settings, tr, trErr)...)
	return res, nil
}

// Uninstall removes exactly what Install added.
func Uninstall(ctx context.Context, o Options) (*Result, error) {
	res, err := change(o, true)
	if err == nil && !o.DryRun && o.Agent == hook.Codex && res.Changed() {
		res.Notes = append(res.Notes, "Codex keeps the trust records (hooks.state) in config.toml; they match no hook now and do no harm.")
	}
	return res, err
}

// installs reports whether cmd is one of the hook commands install writes.
func (o Options) installs(cmd string) bool {
	return slices.ContainsFunc(specs[o.Agent].events, func(ev eventSpec) bool { return Command(o, ev.sub) == cmd })
}

// settings plans the settings file.
func (p *plan) settings(path string, remove bool) error {
	fc, err := readFile(path)
	if err != nil {
		return err
	}
	before := fc.before
	rec := p.m.Settings[path]
	if remove && rec == nil {
		fc.Action = Unchanged
		if e, _ := Entries(p.o.Agent, before); before != nil && len(e) > 0 {
			p.res.Notes = append(p.res.Notes, fmt.Sprintf("%s: %d runtasks hook(s) that install did not write (or wrote before it kept a record) are left as they are.", path, len(e)))
		}
		p.res.Files = append(p.res.Files, fc)
		return nil
	}
	d, err := parseDoc(before)
	var nr *settingsRecord
	if err == nil && !remove {
		nr, err = d.install(p.o, rec)
	}
	if err != nil {
		return fmt.Errorf("%s: %w (nothing was changed)", path, err)
	}
	if !remove {
		if Rejected(p.o.Agent, before) {
			p.res.Notes = append(p.res.Notes, fmt.Sprintf("%s has comments or trailing commas: %s skips the whole file, these hooks too, until they are removed.", path, p.o.Agent))
		}
		if rec == nil {
			nr.NewFile = before == nil
			if before != nil && len(bytes.TrimSpace(before)) == 0 {
				s := string(before)
				nr.Blank = &s
			}
		}
		p.m.Settings[path] = nr
		if before == nil {
			p.needDirs(fc.target)
		}
	} else {
		found := d.remove(rec)
		if found < len(rec.Owned) {
			p.res.Notes = append(p.res.Notes, fmt.Sprintf("%s: %d of the %d entries install wrote were changed since (or removed) and are left as they are.", path, len(rec.Owned)-found, len(rec.Owned)))
		}
		delete(p.m.Settings, path)
	}
	fc.after = d.root.Pack()
	if n := bytes.Count(before, []byte("\r\n")); n > 0 && n == bytes.Count(before, []byte("\n")) {
		// A CRLF file stays CRLF: the lines install writes take its ending.
		fc.after = bytes.ReplaceAll(bytes.ReplaceAll(fc.after, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	}
	if remove && before != nil && isEmpty(d.root) {
		switch {
		case rec.NewFile:
			fc.after = nil
		case rec.Blank != nil:
			fc.after = []byte(*rec.Blank)
		}
	}
	fc.Action = action(fc.before, fc.after)
	fc.backup = !remove && fc.before != nil && fc.Action != Unchanged
	if p.o.DryRun && fc.Action != Unchanged {
		from, to := "a/"+strings.TrimPrefix(path, "/"), "b/"+strings.TrimPrefix(path, "/")
		if fc.before == nil {
			from = "/dev/null"
		}
		if fc.after == nil {
			to = "/dev/null"
		}
		fc.Diff = udiff.Unified(from, to, string(fc.before), string(fc.after))
	}
	p.res.Files = append(p.res.Files, fc)
	b := p.o.backupPath(path)
	if _, err := os.Lstat(b); remove && err == nil {
		p.res.Files = append(p.res.Files, FileChange{Path: b, target: b, Action: Removed})
	}
	return nil
}

// sharedFiles plans the skills and project.yaml.
func (p *plan) sharedFiles(remove bool) error {
	plan := p.addShared
	if remove {
		plan = p.removeShared
	}
	for _, name := range Skills {
		content, err := prompts.Read("skills/" + name + "/SKILL.md")
		if err != nil {
			return fmt.Errorf("skill %s: %w", name, err)
		}
		if err := plan(filepath.Join(p.o.root(), specs[p.o.Agent].skillsDir, name, "SKILL.md"), []byte(content)); err != nil {
			return err
		}
	}
	if !p.o.Global {
		return plan(filepath.Join(p.o.ProjectDir, "project.yaml"), runtasks.ProjectYAMLExample)
	}
	return nil
}

func (p *plan) addShared(path string, content []byte) error {
	fc, err := readFile(path)
	if err != nil {
		return err
	}
	before, rec := fc.before, p.m.Files[path]
	switch {
	case before == nil:
		p.m.Files[path] = &sharedFile{SHA256: digest(content), Holders: []string{p.holder}}
		p.needDirs(fc.target)
	case rec != nil && digest(before) == rec.SHA256:
		// Ours: a newer runtasks' version of it is an update.
		rec.Holders = addHolder(rec.Holders, p.holder)
		rec.SHA256 = digest(content)
	default:
		// The user's own file (or one they changed since): theirs.
		delete(p.m.Files, path)
		if !bytes.Equal(before, content) && filepath.Base(path) == "SKILL.md" {
			p.res.Notes = append(p.res.Notes, path+" differs from runtasks' skill; it is yours and is left as it is.")
		}
		content = before
	}
	fc.after = content
	fc.Action = action(before, content)
	p.res.Files = append(p.res.Files, fc)
	return nil
}

func (p *plan) removeShared(path string, _ []byte) error {
	rec := p.m.Files[path]
	if rec == nil {
		return nil
	}
	rec.Holders = dropHolder(rec.Holders, p.holder)
	if len(rec.Holders) > 0 {
		return nil
	}
	delete(p.m.Files, path)
	fc, err := readFile(path)
	if err != nil && fc.target == "" {
		return err // its symlinks cannot be followed
	}
	if err == nil && fc.before != nil && digest(fc.before) == rec.SHA256 {
		fc.Action = Removed
		p.res.Files = append(p.res.Files, fc)
	}
	return nil // else gone, or changed by the user since: theirs now
}

// action is what replacing before (nil: missing) with after (nil: none) does.
func action(before, after []byte) string {
	switch {
	case (before == nil) == (after == nil) && bytes.Equal(before, after):
		return Unchanged
	case before == nil:
		return Created
	case after == nil:
		return Removed
	}
	return Updated
}

// needDirs records the directories install creates for target.
func (p *plan) needDirs(target string) {
	root := p.o.root()
	for dir := filepath.Dir(target); dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if holders, ok := p.m.Dirs[dir]; ok {
			p.m.Dirs[dir] = addHolder(holders, p.holder)
			continue
		}
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			p.m.Dirs[dir] = []string{p.holder} // apply's MkdirAll creates it
		}
	}
}

// releaseDirs drops this install from the recorded directories and
// returns those it no longer shares, deepest first.
func (p *plan) releaseDirs() []string {
	var out []string
	for dir, holders := range p.m.Dirs {
		if holders = dropHolder(holders, p.holder); len(holders) > 0 {
			p.m.Dirs[dir] = holders
			continue
		}
		delete(p.m.Dirs, dir)
		out = append(out, dir)
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return out
}

// apply checks that every file can be written, then writes: for install
// the record first (it may name entries a kill kept out of the file, which
// does no harm), then each file after its backup; for uninstall the files
// first, then the record.
func (p *plan) apply(remove bool) error {
	for _, fc := range p.res.Files {
		os.Remove(tempName(fc.target)) // left by a killed run
		if fc.Action == Unchanged {
			continue
		}
		if err := checkWritable(fc.target); err != nil {
			return fmt.Errorf("%s: %w (nothing was changed)", fc.Path, err)
		}
		if fc.backup {
			if err := checkWritable(p.o.backupPath(fc.Path)); err != nil {
				return fmt.Errorf("%s: backup: %w (nothing was changed)", fc.Path, err)
			}
		}
	}
	if !remove {
		if err := p.m.save(); err != nil {
			return fmt.Errorf("install record: %w (nothing was changed)", err)
		}
		atPoint("record")
	}
	for i := range p.res.Files {
		fc := &p.res.Files[i]
		switch fc.Action {
		case Unchanged:
			continue
		case Removed:
			if err := os.Remove(fc.target); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if fc.backup {
			b := p.o.backupPath(fc.Path)
			err := os.MkdirAll(filepath.Dir(b), 0o700)
			if err == nil {
				err = writeAtomic(b, fc.before, fc.perm)
			}
			if err != nil {
				return fmt.Errorf("backup of %s: %w (nothing was changed)", fc.Path, err)
			}
			fc.Backup = b
			atPoint("backup")
		}
		if err := os.MkdirAll(filepath.Dir(fc.target), 0o755); err != nil {
			return err
		}
		if err := writeAtomic(fc.target, fc.after, fc.perm); err != nil {
			return fmt.Errorf("%s: %w", fc.Path, err)
		}
	}
	if remove {
		for _, dir := range p.releaseDirs() {
			os.Remove(dir) // only when empty: what else is there stays
		}
		if err := p.m.save(); err != nil {
			return fmt.Errorf("install record: %w", err)
		}
	}
	return nil
}
