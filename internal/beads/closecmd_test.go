package beads

import (
	"slices"
	"testing"
)

func TestClosedBy(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"bd close T-1", []string{"T-1"}},
		{"bd close T-1 T-2", []string{"T-1", "T-2"}},
		{"timeout 60 bd close T-1", []string{"T-1"}},
		{"timeout -k 5 -s KILL 2m bd close T-1", []string{"T-1"}},
		{"nice -n 10 bd close T-1", []string{"T-1"}},
		{"timeout 60 echo bd close T-1", nil},
		{"bd done T-1", []string{"T-1"}},
		{"bd close T-1 --reason 'fixed it'", []string{"T-1"}},
		{"bd close --reason fixed T-1", []string{"T-1"}},
		{"bd close -r fixed T-1 -f", []string{"T-1"}},
		{"bd close T-1 --reason=done --json", []string{"T-1"}},
		{"bd -q close T-1", []string{"T-1"}},
		{"bd --actor alice close T-1", []string{"T-1"}},
		{"bd -C /repo close T-1", []string{"T-1"}},
		{"/usr/local/bin/bd close T-1", []string{"T-1"}},
		{"./bd close T-1", []string{"T-1"}},
		{"bd update T-1 --status closed", []string{"T-1"}},
		{"bd update T-1 --status=closed", []string{"T-1"}},
		{"bd update T-1 -s closed", []string{"T-1"}},
		{"bd update --status closed T-1 T-2", []string{"T-1", "T-2"}},
		{"bd update T-1 --notes 'x' --status closed --json", []string{"T-1"}},
		{"BEADS_DIR=/x bd close T-1", []string{"T-1"}},
		{"A=1 B='two words' bd close T-1", []string{"T-1"}},
		{"env BD_ACTOR=me bd close T-1", []string{"T-1"}},
		{"go test ./... && bd close T-1", []string{"T-1"}},
		{"make; bd close T-1", []string{"T-1"}},
		{"make || bd close T-1", []string{"T-1"}},
		{"true | bd close T-1", []string{"T-1"}},
		{"(cd sub && bd close T-1)", []string{"T-1"}},
		{"echo $(bd close T-1)", []string{"T-1"}},
		{"bd close T-1 >/dev/null 2>&1", []string{"T-1"}},
		{"bd close T-1 > out-file.txt", []string{"T-1"}},
		{"git commit -m 'x'\nbd close T-1", []string{"T-1"}},
		{"bd close T-1 # done\necho ok", []string{"T-1"}},
		{"bd close \\\n  T-1", []string{"T-1"}},
		{"bd close -- T-1", []string{"T-1"}},
		{"cat <<EOF\nbd close T-9\nEOF\nbd close T-1", []string{"T-1"}},
		{"bd update T-1 --status in_progress", nil},
		{"bd update T-1 --status open --notes closed", nil},
		{"bd update T-1 --title 'closed'", nil},
		{"bd show T-1", nil},
		{"bd list --status closed", nil},
		{"bd create 'close the door' --json", nil},
		{"echo bd close T-1", nil},
		{`echo "bd close T-1"`, nil},
		{"echo 'bd close T-1' && true", nil},
		{"# bd close T-1", nil},
		{"ls # bd close T-1", nil},
		{"cat <<EOF > notes.md\nbd close T-1\nEOF", nil},
		{"cat <<-'END'\n\tbd close T-1\n\tEND\nls", nil},
		{"git commit -m 'bd close T-1'", nil},
		{"grep -r 'bd close' .", nil},
		{"printf '%s\\n' bd close T-1", nil},
		{"bdx close T-1", nil},
		{"abd close T-1", nil},
		{"sh -c 'bd close T-1'", nil},
		{"bd", nil},
		{"bd close", []string{}},
		{"", nil},
	} {
		if got := ClosedBy(c.line); !slices.Equal(got, c.want) {
			t.Errorf("ClosedBy(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestMergesTask(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"git -C /repo merge --no-edit agent/bd-e.1", true},
		{"cd /repo && git merge agent/bd-e.1", true},
		{"git merge bd-e.1", true},
		{"git merge agent/bd-e.10", false},
		{"git merge --abort", false},
		{"echo git merge agent/bd-e.1", false},
		{"git log agent/bd-e.1", false},
	} {
		if got := MergesTask(c.line, "bd-e.1"); got != c.want {
			t.Errorf("MergesTask(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}
