package results

import (
	"fmt"
	"testing"
)

// Variants finish in any order; hotspots.json and server.json list them in the
// scenario's order, replacing a variant added twice, and put unnamed ones last.
func TestAddKeepsTheScenariosVariantOrder(t *testing.T) {
	d, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.SetVariantOrder([]string{"a", "b", "c", "d"})
	for _, n := range []string{"c", "x", "a", "d", "b", "a"} {
		if err := d.AddHotspots(HotspotsVariant{Variant: n}); err != nil {
			t.Fatal(err)
		}
		if err := d.AddServer(ServerVariant{Variant: n}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ReadHotspots(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadServer(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	var hn, sn []string
	for _, v := range h.Variants {
		hn = append(hn, v.Variant)
	}
	for _, v := range s.Variants {
		sn = append(sn, v.Variant)
	}
	want := "[a b c d x]"
	if got := fmt.Sprint(hn); got != want {
		t.Errorf("hotspots.json: %s, want %s", got, want)
	}
	if got := fmt.Sprint(sn); got != want {
		t.Errorf("server.json: %s, want %s", got, want)
	}
}

// AddServer keeps the server.json it wrote in memory rather than decode it again for each
// variant; a report written whole (WriteServer) replaces it, and later variants are
// added to that one.
func TestAddServerBuildsOnWhatWasWritten(t *testing.T) {
	d, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names := func() string {
		t.Helper()
		s, err := ReadServer(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, v := range s.Variants {
			n = append(n, v.Variant)
		}
		return fmt.Sprint(n)
	}
	for _, n := range []string{"a", "b"} {
		if err := d.AddServer(ServerVariant{Variant: n}); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(); got != "[a b]" {
		t.Fatalf("after adding a and b: %s", got)
	}
	if err := d.WriteServer(&ServerReport{Variants: []ServerVariant{{Variant: "m"}}}); err != nil {
		t.Fatal(err)
	}
	if err := d.AddServer(ServerVariant{Variant: "c"}); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "[m c]" {
		t.Errorf("after writing [m] and adding c: %s, want [m c]", got)
	}
}
