package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/runtasks/runtasks/internal/hook"
)

// settingsRecord is what install wrote into one settings file.
type settingsRecord struct {
	Agent string    `json:"agent"`
	Owned []written `json:"owned,omitempty"` // entries added
	// Created are members install added; uninstall removes them once empty.
	Created []written `json:"created,omitempty"`
	// Restore are containers that were empty, with their whitespace then.
	Restore []restoreExtra `json:"restore,omitempty"`
	// NewFile: the file did not exist; Blank: it held only whitespace.
	NewFile bool    `json:"new_file,omitempty"`
	Blank   *string `json:"blank,omitempty"`
}

// written is an entry or member install wrote: its path and its value,
// minified (an owned entry's is never empty; a created container has none).
type written struct {
	Path  []string `json:"path"`
	Value string   `json:"value,omitempty"`
	// Replaced is the foreign entry an owned one replaced; uninstall puts it back.
	Replaced string `json:"replaced,omitempty"`
}

type restoreExtra struct {
	Path  []string `json:"path"`
	Extra string   `json:"extra"`
}

// marshal is json.Marshal without HTML escaping (commands hold & and <).
func marshal(v any) []byte {
	return marshalIndent(v, "", "")
}

// marshalIndent encodes what install writes: strings, numbers, null, and
// structs, maps and lists of them, which always encode.
func marshalIndent(v any, prefix, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var (
	oneLineSpace = regexp.MustCompile(`,\n\t*`)
	lineBreak    = regexp.MustCompile(`\n\t*`)
)

// shapeError is v, at path, of the wrong kind where install must edit.
func (d *doc) shapeError(v *hujson.Value, path []string, want string) error {
	return fmt.Errorf("line %d: %q is %s, want %s", lineAt(d.src, v.StartOffset), strings.Join(path, "."), kindNames[v.Value.Kind()], want)
}

var kindNames = map[hujson.Kind]string{'n': "null", 't': "a boolean", 'f': "a boolean", '"': "a string",
	'0': "a number", '{': "an object", '[': "a list"}

// doc is a parsed settings file being edited.
type doc struct {
	src     []byte // the original bytes (offsets in the tree point into them)
	root    hujson.Value
	unit    string // the file's indent unit
	compact bool   // the file is one line; added values are too
}

// parseDoc parses a settings file; blank content is an empty object.
func parseDoc(data []byte) (*doc, error) {
	src := data
	if len(bytes.TrimSpace(data)) == 0 {
		src = []byte("{}\n")
	}
	root, err := hujson.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %s", strings.TrimPrefix(err.Error(), "hujson: "))
	}
	if root.Value.Kind() != '{' {
		return nil, fmt.Errorf("line %d: the file holds %s, want an object", lineAt(src, root.StartOffset), kindNames[root.Value.Kind()])
	}
	d := &doc{src: src, root: root, unit: indentUnit(src[root.StartOffset:])} // not a header comment's
	obj := root.Value.(*hujson.Object)
	d.compact = len(obj.Members) > 0 && !bytes.Contains(src[root.StartOffset:root.EndOffset], []byte("\n"))
	return d, nil
}

func lineAt(b []byte, off int) int {
	off = min(max(off, 0), len(b))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// indentUnit is the leading whitespace of the first indented line, or two spaces.
func indentUnit(b []byte) string {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		n := len(leadingSpace(line))
		if n > 0 && n < len(line) && line[n] != '\r' {
			if line[0] == '\t' {
				return "\t"
			}
			return string(line[:n])
		}
	}
	return "  "
}

// lineIndent is the leading whitespace of the line holding offset off.
func (d *doc) lineIndent(off int) string {
	off = min(max(off, 0), len(d.src))
	return string(leadingSpace(d.src[bytes.LastIndexByte(d.src[:off], '\n')+1:]))
}

func leadingSpace(b []byte) []byte { return b[:len(b)-len(bytes.TrimLeft(b, " \t"))] }

// memberIndex is the index of the first member named name, or -1.
func memberIndex(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// lookup walks path from the root: the value there, nil when missing, an
// error for a non-object on the way.
func (d *doc) lookup(path []string) (*hujson.Value, error) {
	v := &d.root
	for i, name := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil, d.shapeError(v, path[:i], "an object")
		}
		j := memberIndex(obj, name)
		if j < 0 {
			return nil, nil
		}
		v = &obj.Members[j].Value
	}
	return v, nil
}

// minified is v as minified standard JSON, the form entries are compared in.
func minified(v hujson.Value) string {
	c := v.Clone()
	c.Standardize()
	c.Minimize()
	return string(c.Pack())
}

// newValue is x formatted at indent ind (or on one line when compact).
func (d *doc) newValue(x any, ind string, compact bool) hujson.Value {
	var b []byte
	switch {
	case compact && d.compact:
		b = marshal(x)
	case compact:
		// One line with the spaces of a pretty file: {"a": 1, "b": 2}.
		// (JSON strings hold no raw line break or tab.)
		b = oneLineSpace.ReplaceAll(marshalIndent(x, "", "\t"), []byte(", "))
		b = lineBreak.ReplaceAll(b, nil)
	default:
		b = marshalIndent(x, ind, d.unit)
	}
	v, _ := hujson.Parse(b) // standard JSON
	return v
}

// siblingStyle is how a non-empty container's elements start (a line
// break first when they stand on lines of their own) and their indent.
func siblingStyle(before hujson.Extra) (extra, ind string) {
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		rest := before[i+1:]
		if len(bytes.TrimLeft(rest, " \t")) == 0 {
			return "\n" + string(rest), string(rest)
		}
		return "\n", ""
	}
	return string(leadingSpace(before)), ""
}

// appendTo adds x at the end of the container v (at path) in its style:
// as member name of an object, else as an element of a list.
func (d *doc) appendTo(v *hujson.Value, path []string, name string, x any, rec *settingsRecord) {
	obj, isObj := v.Value.(*hujson.Object)
	arr, _ := v.Value.(*hujson.Array)
	// last is the last element or member value, start what begins it.
	var last, start *hujson.Value
	if isObj && len(obj.Members) > 0 {
		m := &obj.Members[len(obj.Members)-1]
		last, start = &m.Value, &m.Name
	} else if !isObj && len(arr.Elements) > 0 {
		last = &arr.Elements[len(arr.Elements)-1]
		start = last
	}
	var before, ind, colon string
	if last != nil {
		before, ind = siblingStyle(start.BeforeExtra)
		if !bytes.ContainsAny(last.BeforeExtra, "\n/") {
			colon = string(last.BeforeExtra)
		}
	} else if before, ind = d.emptyContainer(v, path, rec); before != "" {
		colon = " "
	}
	compact := !strings.HasPrefix(before, "\n")
	// List elements written on one line each: so is this one.
	if !isObj && !compact && last != nil && last.EndOffset > last.StartOffset && last.EndOffset <= len(d.src) {
		compact = !bytes.Contains(d.src[last.StartOffset:last.EndOffset], []byte("\n"))
	}
	nv := d.newValue(x, ind, compact)
	// nv takes over last's trailing comma, if any.
	if last != nil && last.AfterExtra != nil {
		nv.AfterExtra = hujson.Extra{}
	} else if last != nil {
		last.AfterExtra = hujson.Extra{}
	}
	if !isObj {
		nv.BeforeExtra = hujson.Extra(before)
		arr.Elements = append(arr.Elements, nv)
		return
	}
	nv.BeforeExtra = hujson.Extra(colon)
	n := hujson.Value{BeforeExtra: hujson.Extra(before), Value: hujson.Literal(marshal(name))}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: n, Value: nv})
}

// emptyContainer prepares an empty container for its first element,
// recording its old closing whitespace.
func (d *doc) emptyContainer(v *hujson.Value, path []string, rec *settingsRecord) (before, ind string) {
	if d.compact {
		return "", ""
	}
	after := closing(v)
	outer := d.lineIndent(v.StartOffset)
	if !slices.ContainsFunc(rec.Restore, func(r restoreExtra) bool { return slices.Equal(r.Path, path) }) {
		rec.Restore = append(rec.Restore, restoreExtra{Path: slices.Clone(path), Extra: string(*after)})
	}
	if !bytes.HasSuffix(bytes.TrimRight(*after, " \t"), []byte("\n")) {
		*after = append(append(hujson.Extra(nil), *after...), "\n"+outer...)
	}
	return "\n" + outer + d.unit, outer + d.unit
}

// removeAt removes element i of a container, keeping the comma style: a
// new last element takes the removed one's trailing comma (or none).
func removeAt(c hujson.ValueTrimmed, i int) {
	var (
		gone hujson.Extra  // the removed one's AfterExtra
		last *hujson.Value // the new last one, if the last was removed
	)
	switch c := c.(type) {
	case *hujson.Array:
		gone = c.Elements[i].AfterExtra
		c.Elements = slices.Delete(c.Elements, i, i+1)
		if i == len(c.Elements) && i > 0 {
			last = &c.Elements[i-1]
		}
	case *hujson.Object:
		gone = c.Members[i].Value.AfterExtra
		c.Members = slices.Delete(c.Members, i, i+1)
		if i == len(c.Members) && i > 0 {
			last = &c.Members[i-1].Value
		}
	}
	switch {
	case last == nil:
	case gone != nil && last.AfterExtra == nil:
		last.AfterExtra = hujson.Extra{}
	case gone == nil:
		after := closing(&hujson.Value{Value: c})
		*after = append(slices.Clone(last.AfterExtra), *after...)
		last.AfterExtra = nil
	}
}

func pathKey(p []string) string { return strings.Join(p, "\x00") }

// install puts the entries and missing top-level scalars install writes
// for o.Agent into the document and returns the new record. Owned entries
// are updated in place, unwanted ones removed; the user's identical entry
// is left, not doubled.
func (d *doc) install(o Options, old *settingsRecord) (*settingsRecord, error) {
	if old == nil {
		old = &settingsRecord{}
	}
	rec := &settingsRecord{Agent: o.Agent, NewFile: old.NewFile, Blank: old.Blank,
		Created: slices.Clone(old.Created), Restore: slices.Clone(old.Restore)}
	sp := specs[o.Agent]
	root := d.root.Value.(*hujson.Object)
	for _, k := range slices.Sorted(maps.Keys(sp.scalars)) {
		if memberIndex(root, k) >= 0 {
			continue
		}
		d.appendTo(&d.root, nil, k, sp.scalars[k], rec)
		rec.Created = append(rec.Created, written{Path: []string{k}, Value: string(marshal(sp.scalars[k]))})
	}
	var paths [][]string
	for _, ev := range sp.events {
		path := []string{"hooks", hook.NativeEvent(o.Agent, ev.event)}
		value := entry(o, ev)
		want := string(marshal(value))
		paths = append(paths, path)
		// owned is the index in old.Owned of the entry e is (-1: none).
		owned := func(e hujson.Value) int {
			m := minified(e)
			return slices.IndexFunc(old.Owned, func(o written) bool { return o.Value == m && slices.Equal(o.Path, path) })
		}
		// Objects on the way, a list at the end (on an error the caller
		// drops the document).
		v, err := d.lookup(path)
		if err == nil && v != nil && v.Value.Kind() != '[' {
			err = d.shapeError(v, path, "a list")
		}
		if err != nil {
			return nil, err
		}
		if v == nil {
			d.create(path, value, rec)
			rec.Owned = append(rec.Owned, written{Path: path, Value: want})
			continue
		}
		arr := v.Value.(*hujson.Array)
		found, replaced := slices.IndexFunc(arr.Elements, func(e hujson.Value) bool { return owned(e) >= 0 }), ""
		if found >= 0 {
			replaced = old.Owned[owned(arr.Elements[found])].Replaced
		}
		exact := slices.ContainsFunc(arr.Elements, func(e hujson.Value) bool { return minified(e) == want })
		// A second copy of ours goes (one is enough). Foreign runtasks
		// entries (another machine, epic, or no record): the first is
		// replaced in place when none is ours, the others go.
		for i := 0; i < len(arr.Elements); i++ {
			e := arr.Elements[i]
			switch {
			case i == found || owned(e) < 0 && (minified(e) == want || !foreignEntry(e, sp.grouped, ev.sub)):
				// ours, the wanted one, or the user's own: it stays
			case owned(e) >= 0 || found >= 0 || exact:
				removeAt(arr, i)
				if i < found {
					found--
				}
				i--
			default:
				found, replaced = i, string(hujson.Value{Value: e.Value}.Pack())
			}
		}
		switch {
		case found >= 0:
			el := &arr.Elements[found]
			if minified(*el) != want {
				multiline := el.EndOffset > el.StartOffset && el.EndOffset <= len(d.src) &&
					bytes.Contains(d.src[el.StartOffset:el.EndOffset], []byte("\n"))
				el.Value = d.newValue(value, d.lineIndent(el.StartOffset), !multiline).Value
			}
		case exact:
			continue // the user's own copy (or the team's): not ours, not added twice
		default:
			d.appendTo(v, path, "", value, rec)
		}
		rec.Owned = append(rec.Owned, written{Path: path, Value: want, Replaced: replaced})
	}
	// Entries an earlier install wrote for events no longer wanted.
	stale := slices.DeleteFunc(slices.Clone(old.Owned), func(o written) bool {
		return slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, o.Path) })
	})
	d.remove(&settingsRecord{Owned: stale})
	return rec, nil
}

// create adds the missing members on path, the last one a list holding x.
func (d *doc) create(path []string, x any, rec *settingsRecord) {
	v := &d.root
	for i, name := range path {
		obj := v.Value.(*hujson.Object)
		j := memberIndex(obj, name)
		if j >= 0 {
			v = &obj.Members[j].Value
			continue
		}
		// Build the rest of the path as one value: {"a": {"b": [x]}}.
		var val any = []any{x}
		for k := len(path) - 1; k > i; k-- {
			val = map[string]any{path[k]: val}
		}
		for k := i; k < len(path); k++ {
			rec.Created = append(rec.Created, written{Path: slices.Clone(path[:k+1])})
		}
		d.appendTo(v, path[:i], name, val, rec)
		return
	}
}

// remove takes out rec's entries and the emptied members it created; it
// returns how many owned entries it found.
func (d *doc) remove(rec *settingsRecord) int {
	touched := map[string]bool{}
	n := 0
	for _, o := range rec.Owned {
		// lookup gives nil for a missing member and for a wrong shape.
		if v, _ := d.lookup(o.Path); v != nil {
			if i := slices.IndexFunc(elements(*v), func(e hujson.Value) bool { return minified(e) == o.Value }); i >= 0 {
				n++
				if old, err := hujson.Parse([]byte(o.Replaced)); o.Replaced != "" && err == nil {
					elements(*v)[i].Value = old.Value // the entry it replaced, back where it stood
					continue
				}
				removeAt(v.Value, i)
				touched[pathKey(o.Path)] = true
			}
		}
	}
	created := slices.Clone(rec.Created)
	slices.SortStableFunc(created, func(a, b written) int { return len(b.Path) - len(a.Path) })
	for _, c := range created {
		mv, _ := d.lookup(c.Path)
		switch {
		case mv == nil:
			continue
		case c.Value != "":
			// A scalar install added goes with the last entry.
			if n == 0 || minified(*mv) != c.Value {
				continue
			}
		case !touched[pathKey(c.Path)] || !isEmpty(*mv):
			continue
		}
		parent := c.Path[:len(c.Path)-1]
		pv, _ := d.lookup(parent)
		obj := pv.Value.(*hujson.Object)
		removeAt(obj, memberIndex(obj, c.Path[len(c.Path)-1]))
		touched[pathKey(parent)] = true
	}
	for _, r := range rec.Restore {
		if v, _ := d.lookup(r.Path); touched[pathKey(r.Path)] && v != nil && isEmpty(*v) {
			*closing(v) = hujson.Extra(r.Extra)
		}
	}
	return n
}

// closing is the whitespace before a container's closing bracket.
func closing(v *hujson.Value) *hujson.Extra {
	if c, ok := v.Value.(*hujson.Object); ok {
		return &c.AfterExtra
	}
	return &v.Value.(*hujson.Array).AfterExtra
}

func isEmpty(v hujson.Value) bool {
	m := minified(v)
	return m == "{}" || m == "[]"
}
