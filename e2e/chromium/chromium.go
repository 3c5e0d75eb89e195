// Package chromium drives headless Chromium for runtasks' tests: a page's
// rendered DOM, a screenshot, and the README's screenshots (make chromium
// installs it).
package chromium

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
)

// Require returns Chromium's path (RUNTASKS_CHROMIUM, else /usr/bin/chromium),
// failing (never skipping) when it is missing.
func Require(t testing.TB) string {
	t.Helper()
	bin := cmp.Or(os.Getenv("RUNTASKS_CHROMIUM"), "/usr/bin/chromium")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Chromium missing at %s (run `make chromium`, or set RUNTASKS_CHROMIUM): %v", bin, err)
	}
	return bin
}

// run runs Chromium on the local file page (an absolute path) in its own
// process group, killed after 90 s or when done, headless on a closed
// network (no sandbox: CI runs as root).
func run(t testing.TB, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, slices.Concat(flags, args, []string{"file://" + filepath.ToSlash(page)})...)
	g := shell.NewContextGroup(cmd, shell.Kill, 4500*time.Millisecond)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	g.Reap() // helpers Chromium left behind go with the group
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.Bytes()[max(errb.Len()-4000, 0):])
	}
	return out.Bytes()
}

// DumpDOM is the page's DOM, serialised after Chromium rendered it.
func DumpDOM(t testing.TB, bin, page string) string {
	t.Helper()
	return string(run(t, bin, page, "--dump-dom"))
}

// Screenshot renders page in a window of w x h pixels and returns the PNG
// and its decoded image.
func Screenshot(t testing.TB, bin, page string, w, h int) ([]byte, image.Image) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "shot.png")
	run(t, bin, page, "--screenshot="+file, fmt.Sprintf("--window-size=%d,%d", w, h))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got.X != w || got.Y != h {
		t.Errorf("screenshot is %dx%d, want %dx%d", got.X, got.Y, w, h)
	}
	return b, img
}

// CheckNotBlank fails unless the image has at least minColors colours and
// at least minShare of its pixels unlike the top-left one (the background).
func CheckNotBlank(img image.Image, minColors int, minShare float64) error {
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	br, bgg, bb, ba := bg.RGBA()
	seen := map[[4]uint32]bool{}
	differ := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if r != br || g != bgg || bl != bb || a != ba {
				differ++
			}
		}
	}
	colors, share := len(seen), float64(differ)/float64(b.Dx()*b.Dy())
	if colors < minColors || share < minShare {
		return fmt.Errorf("screenshot looks blank: %d colour(s), %.1f%% of pixels off the background (want >= %d, >= %.1f%%)",
			colors, share*100, minColors, minShare*100)
	}
	return nil
}
