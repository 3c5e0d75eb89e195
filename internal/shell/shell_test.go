package shell

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	res, err := Runner{}.Run(ctx, dir, "echo hello; pwd", time.Minute)
	if err != nil || res.ExitCode != 0 || !strings.Contains(string(res.Output), "hello") || !strings.Contains(string(res.Output), dir) {
		t.Fatalf("ok command: %+v %v", res, err)
	}
	res, err = Runner{}.Run(ctx, dir, "echo failing >&2; exit 3", time.Minute)
	if err != nil || res.ExitCode != 3 || strings.TrimSpace(string(res.Output)) != "failing" || res.TimedOut {
		t.Fatalf("failing command: %+v %v", res, err)
	}
	start := time.Now()
	res, err = Runner{}.Run(ctx, dir, "sleep 30 & sleep 30; echo never", 200*time.Millisecond)
	if err != nil || !res.TimedOut || strings.Contains(string(res.Output), "never") {
		t.Fatalf("timed out command: %+v %v", res, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the timeout did not kill the group: %s", el)
	}
	res, err = Runner{}.Run(ctx, dir, "yes 0123456789 | head -c 200000; echo END", time.Minute)
	if err != nil || len(res.Output) != MaxOutput || !strings.HasSuffix(string(res.Output), "END\n") {
		t.Fatalf("tail: %d bytes, suffix %q, %v", len(res.Output), string(res.Output[len(res.Output)-10:]), err)
	}
	if _, err := (Runner{}).Run(ctx, dir+"/nonexistent", "true", time.Minute); err == nil {
		t.Fatal("want an error for a command that cannot start")
	}
}
