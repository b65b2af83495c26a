package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCapacityRoundTripAndRanking(t *testing.T) {
	dir := t.TempDir()
	if c, err := ReadCapacity(dir); c != nil || err != nil {
		t.Fatalf("no capacity.json: %v %v", c, err)
	}
	c := &Capacity{Variants: []CapacityVariant{
		{Variant: "short", Outcome: CapacityBelowRange, Breaks: 0.01},
		{Variant: "mid", Outcome: CapacityFound, Sustains: 1.2, Breaks: 1.25},
		{Variant: "cut", Outcome: CapacityIncomplete, Sustains: 4},
		{Variant: "best", Outcome: CapacityAboveRange, Sustains: 32},
		{Variant: "high", Outcome: CapacityFound, Sustains: 2.5, Breaks: 2.6},
	}}
	if err := At(dir).WriteCapacity(c); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCapacity(dir)
	if err != nil || back.Schema != CapacitySchema || back.Version != CapacityVersion || back.Variant("mid").Sustains != 1.2 {
		t.Fatalf("read back %+v: %v", back, err)
	}
	var names []string
	for _, i := range back.Ranking() {
		names = append(names, back.Variants[i].Variant)
	}
	if want := []string{"best", "high", "mid", "cut", "short"}; !reflect.DeepEqual(names, want) {
		t.Errorf("ranking %v, want %v", names, want)
	}
	// A newer version or another file is refused, not misread.
	b, _ := os.ReadFile(filepath.Join(dir, CapacityFile))
	os.WriteFile(filepath.Join(dir, CapacityFile), []byte(strings.Replace(string(b), `"version": 1`, `"version": 9`, 1)), 0o644)
	if _, err := ReadCapacity(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("version 9: %v", err)
	}
	os.Remove(filepath.Join(dir, CapacityFile))
	os.Symlink("/dev/zero", filepath.Join(dir, CapacityFile))
	if _, err := ReadCapacity(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a link to /dev/zero: %v", err)
	}
}
