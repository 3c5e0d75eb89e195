package chromium

import (
	"image"
	"image/color"
	"testing"
)

func TestCheckNotBlank(t *testing.T) {
	blank := image.NewRGBA(image.Rect(0, 0, 100, 100))
	for i := range blank.Pix {
		blank.Pix[i] = 0xff
	}
	speck := image.NewRGBA(blank.Rect)
	copy(speck.Pix, blank.Pix)
	speck.Set(5, 5, color.Black)
	drawn := image.NewRGBA(blank.Rect)
	for y := range 100 {
		for x := range 100 {
			drawn.Set(x, y, color.RGBA{uint8(x * 2), uint8(y * 2), 90, 255})
		}
	}
	tests := []struct {
		name string
		img  image.Image
		ok   bool
	}{
		{"white", blank, false},
		{"one black pixel", speck, false},
		{"drawn", drawn, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckNotBlank(tt.img, 16, 0.05); (err == nil) != tt.ok {
				t.Errorf("CheckNotBlank = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
