package main

import (
	"fmt"
	"html"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/runtasks/runtasks/e2e/chromium"
)

// The terminal's colours in the README's screenshot of status --watch.
const (
	termFg = "#d0d7de"
	termBg = "#161b22"
)

// screenHTML is an emulator's screen as an HTML page: one span per run of
// cells of the same style, colours and bold, faint and reverse kept.
func screenHTML(emu *vt.SafeEmulator) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
html,body{margin:0;background:%s}
pre{margin:0;padding:12px 14px;color:%s;font:15px/19px "DejaVu Sans Mono","Liberation Mono",monospace}
b{font-weight:700}
</style></head><body><pre>`, termBg, termFg)
	for y := range emu.Height() {
		open := ""
		for x := 0; x < emu.Width(); x++ {
			c := emu.CellAt(x, y)
			text, style := " ", ""
			if c != nil {
				if c.Width == 0 {
					continue // the tail of a wide cell
				}
				if c.Content != "" {
					text = c.Content
				}
				style = cssOf(c.Style)
			}
			if style != open {
				if open != "" {
					b.WriteString("</span>")
				}
				if style != "" {
					fmt.Fprintf(&b, `<span style="%s">`, style)
				}
				open = style
			}
			b.WriteString(html.EscapeString(text))
		}
		if open != "" {
			b.WriteString("</span>")
		}
		b.WriteString("\n")
	}
	b.WriteString("</pre></body></html>\n")
	return b.String()
}

func cssOf(s uv.Style) string {
	fg, bg := hexOf(s.Fg), hexOf(s.Bg)
	if s.Attrs&uv.AttrReverse != 0 {
		fg, bg = cmpOr(bg, termBg), cmpOr(fg, termFg)
	}
	var out []string
	if fg != "" {
		out = append(out, "color:"+fg)
	}
	if bg != "" {
		out = append(out, "background:"+bg)
	}
	if s.Attrs&uv.AttrBold != 0 {
		out = append(out, "font-weight:700")
	}
	if s.Attrs&uv.AttrFaint != 0 {
		out = append(out, "opacity:.6")
	}
	return strings.Join(out, ";")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// termPalette is the 16 ANSI colours of the screenshot's terminal (a dark
// theme's, readable on termBg; xterm's dark red is not).
var termPalette = [16]string{
	"#484f58", "#ff7b72", "#3fb950", "#d29922", "#58a6ff", "#bc8cff", "#39c5cf", "#b1bac4",
	"#6e7681", "#ffa198", "#56d364", "#e3b341", "#79c0ff", "#d2a8ff", "#56d4dd", "#f0f6fc",
}

func hexOf(c color.Color) string {
	if c == nil {
		return ""
	}
	if i, ok := c.(ansi.BasicColor); ok && int(i) < len(termPalette) {
		return termPalette[i]
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// updateWatchScreenshot renders the captured 80x24 screen in headless
// Chromium into docs/watch.png, only when RUNTASKS_UPDATE_SCREENSHOTS=1
// (the README shows it): normal runs change no tracked file.
func updateWatchScreenshot(t *testing.T, emu *vt.SafeEmulator) {
	t.Helper()
	if os.Getenv(updateScreenshots) != "1" {
		return
	}
	page := filepath.Join(t.TempDir(), "watch.html")
	if err := os.WriteFile(page, []byte(screenHTML(emu)), 0o644); err != nil {
		t.Fatal(err)
	}
	png, img := chromium.Screenshot(t, chromium.Require(t), page, 760, 484)
	if err := chromium.CheckNotBlank(img, 8, 0.02); err != nil {
		t.Fatal(err)
	}
	updateDoc(t, "watch.png", png)
}

func TestScreenHTML(t *testing.T) {
	emu := vt.NewSafeEmulator(20, 2)
	emu.WriteString("\x1b[1;31m! s2\x1b[0m <a&b>\r\n\x1b[7mrev\x1b[0m")
	got := screenHTML(emu)
	for _, want := range []string{
		`<span style="color:#ff7b72;font-weight:700">! s2</span>`, // red, bold
		` &lt;a&amp;b&gt;`,               // text escaped
		`background:` + termFg + `">rev`, // reverse: the default colours swapped
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen HTML lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n < 2 {
		t.Errorf("%d lines, want the screen's 2", n)
	}
}

// updateScreenshots=1 makes tests rewrite the screenshots in docs/.
const updateScreenshots = "RUNTASKS_UPDATE_SCREENSHOTS"

// updateDoc writes png to docs/name when updateScreenshots=1.
func updateDoc(t *testing.T, name string, png []byte) {
	t.Helper()
	if os.Getenv(updateScreenshots) != "1" {
		return
	}
	path := filepath.Join("..", "..", "docs", name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
