//go:build unix

package beads_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
)

// holdSlot is the test binary as another runtasks process: it takes one of
// the single slot in dir, says "held" and keeps it until it dies.
func holdSlot(dir string) int {
	s := &beads.Slots{Dir: dir, Max: 1, Wait: time.Second}
	release, err := s.Acquire(context.Background())
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer release()
	fmt.Println("held")
	time.Sleep(time.Minute)
	return 0
}

func TestSlotsAcquire(t *testing.T) {
	for _, tt := range []struct {
		name      string
		max, hold int
		busy      bool
	}{
		{name: "one free of two", max: 2, hold: 1},
		{name: "all taken", max: 2, hold: 2, busy: true},
		{name: "default max 4, three taken", max: 0, hold: 3},
		{name: "default max 4, all taken", max: 0, hold: 4, busy: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &beads.Slots{Dir: filepath.Join(t.TempDir(), "slots"), Max: tt.max, Wait: 150 * time.Millisecond}
			var releases []func()
			for range tt.hold {
				r, err := s.Acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				releases = append(releases, r)
			}
			start := time.Now()
			r, err := s.Acquire(context.Background())
			if tt.busy {
				if !errors.Is(err, beads.ErrNoSlot) || !strings.Contains(err.Error(), "beads.max_processes") {
					t.Fatalf("err = %v, want no slot", err)
				}
				if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
					t.Errorf("gave up after %s, want about the wait (150ms)", el)
				}
				// A slot given back is taken.
				releases[0]()
				if r, err = s.Acquire(context.Background()); err != nil {
					t.Fatalf("after a release: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			r()
			if fi, err := os.Stat(s.Dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("slots dir: %v %v, want 0700", fi.Mode(), err)
			}
		})
	}
}

func TestSlotsAcquireCancelled(t *testing.T) {
	s := &beads.Slots{Dir: t.TempDir(), Max: 1, Wait: time.Minute}
	r, err := s.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	c := &beads.Client{Bin: "/nonexistent/bd", Slots: s}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := c.Ready(ctx2, "e-1"); !beads.IsKind(err, beads.KindFailed) || !strings.Contains(err.Error(), "interrupted while waiting") {
		t.Fatalf("err = %v, want interrupted", err)
	}
}

// Another process holds the only slot: bd is not started and the call is a
// busy error naming the key; when that process dies its slot is free.
func TestSlotsAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	slots := filepath.Join(dir, "slots")
	holder := exec.Command(os.Args[0], "-test.run=^$")
	holder.Env = append(os.Environ(), "SLOTHOLDER_DIR="+slots)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("holder: %q", line)
	}

	log := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "bd")
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\necho '[]'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &beads.Client{Bin: bin, WorkDir: dir, Slots: &beads.Slots{Dir: slots, Max: 1, Wait: 200 * time.Millisecond}}
	_, err = c.Ready(context.Background(), "e-1")
	if !beads.IsKind(err, beads.KindBusy) || !strings.Contains(err.Error(), "no bd slot free within 200ms") {
		t.Fatalf("err = %v, want busy", err)
	}
	if _, err := os.Stat(log); err == nil {
		t.Fatal("bd ran without a slot")
	}

	holder.Process.Kill()
	holder.Wait()
	if _, err := c.Ready(context.Background(), "e-1"); err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
}

// Twelve concurrent calls with three slots: never more than three bd at
// once (from bd's own start and end times), and every call answered.
func TestSlotsBoundConcurrentCalls(t *testing.T) {
	const calls, slots = 12, 3
	dir := t.TempDir()
	log := filepath.Join(dir, "times")
	bin := filepath.Join(dir, "bd")
	script := "#!/bin/sh\necho \"+ $(date +%s%N)\" >> " + log + "\nsleep 0.2\necho \"- $(date +%s%N)\" >> " + log + "\necho '[]'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &beads.Client{Bin: bin, WorkDir: dir, Slots: &beads.Slots{Dir: filepath.Join(dir, "slots"), Max: slots, Wait: time.Minute}}
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			if _, err := c.Ready(context.Background(), "e-1"); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sign, ns, _ := strings.Cut(l, " ")
		at, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			t.Fatalf("bad line %q", l)
		}
		d := 1
		if sign == "-" {
			d = -1
		}
		evs = append(evs, ev{at, d})
	}
	if len(evs) != 2*calls {
		t.Fatalf("%d events, want %d", len(evs), 2*calls)
	}
	// Ends before starts at the same instant.
	sort.Slice(evs, func(i, j int) bool {
		return evs[i].at < evs[j].at || evs[i].at == evs[j].at && evs[i].delta < evs[j].delta
	})
	n, peak := 0, 0
	for _, e := range evs {
		n += e.delta
		peak = max(peak, n)
	}
	if peak > slots {
		t.Errorf("%d bd ran at once, want at most %d", peak, slots)
	}
	if peak < 2 {
		t.Errorf("peak %d: the calls did not overlap at all", peak)
	}
}

func TestSlotsDir(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h", "XDG_CACHE_HOME=/x"}, "/x/runtasks/bd-slots"},
		{[]string{"HOME=/h"}, "/h/.cache/runtasks/bd-slots"},
		{[]string{"HOME=/h", "XDG_CACHE_HOME=relative"}, "/h/.cache/runtasks/bd-slots"},
		{[]string{"HOME=/a", "HOME=/b"}, "/b/.cache/runtasks/bd-slots"},
		{nil, filepath.Join(os.TempDir(), "runtasks-"+strconv.Itoa(os.Getuid()), "bd-slots")},
	} {
		if got := beads.SlotsDir(tt.env); got != tt.want {
			t.Errorf("SlotsDir(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}
