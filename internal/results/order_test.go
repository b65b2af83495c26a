package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// server.json, assembled from each variant's encoding made once, is what
// json.MarshalIndent makes of the whole report, byte for byte: after every AddServer
// (variants out of order, one replaced with other content), with every field of a
// variant filled (text needing escapes, empty and nil lists, floats), and after a
// WriteServer of a report without variants.
func TestServerDocumentIsMarshalIndent(t *testing.T) {
	d, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.SetVariantOrder([]string{"a", "b", "c"})
	full := func(name, note string) ServerVariant {
		return ServerVariant{
			Variant: name, Source: "simulator <model> & \"co\"",
			Tables:        []ServerTable{{Title: "t", Columns: []string{"node", "load"}, Rows: [][]string{{"n1", "0.5"}, {}}}},
			Series:        []ServerSeries{{Metric: "utilisation", Unit: "ratio", Node: "n1", Points: [][2]float64{{0, 0.25}, {1.5, 1e-7}, {2, 12345678.9}}}, {Metric: "empty"}},
			Nodes:         []ServerNode{{}},
			Disagreements: []string{}, Notes: []string{note, "ünïcode\tand\nlines"},
		}
	}
	check := func(when string) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(d.Path, ServerFile))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReadServer(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(got, want) {
			t.Fatalf("%s: server.json is not json.MarshalIndent's:\n%s\nwant:\n%s", when, got, want)
		}
	}
	for _, v := range []ServerVariant{full("c", "first"), {Variant: "a"}, full("b", "x"), full("c", "replaced")} {
		if err := d.AddServer(v); err != nil {
			t.Fatal(err)
		}
		check("after adding " + v.Variant)
	}
	if s, _ := ReadServer(d.Path); s.Variant("c").Notes[0] != "replaced" {
		t.Fatalf("variant c not replaced: %v", s.Variant("c").Notes)
	}
	for _, r := range []*ServerReport{{}, {Variants: []ServerVariant{}}} {
		if err := d.WriteServer(r); err != nil {
			t.Fatal(err)
		}
		check("after writing a report without variants")
	}
}
