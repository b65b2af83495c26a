package yamlx

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type phase struct {
	Loc      Loc
	Name     string        `yaml:"name"`
	Rate     float64       `yaml:"rate"`
	Duration time.Duration `yaml:"duration"`
}

type doc struct {
	Loc    Loc
	Name   string            `yaml:"name"`
	Seed   int64             `yaml:"seed"`
	Count  uint32            `yaml:"count"`
	On     bool              `yaml:"on"`
	Phases []phase           `yaml:"phases"`
	Tags   map[string]string `yaml:"tags"`
	Ptr    *phase            `yaml:"ptr"`
	Later  Raw               `yaml:"later"`
	Start  time.Time         `yaml:"start"`
}

func TestDecodeReportsEveryErrorWithPosition(t *testing.T) {
	src := `name: demo
seed: nope
phases:
  - name: a
    rate: fast
    duraton: 5s
  - name: b
    duration: 7
count: -1
colour: red
`
	var d doc
	err := Unmarshal("s.yaml", []byte(src), &d)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	want := []string{
		`s.yaml:2:7: seed: expected an integer, got "nope"`,
		`s.yaml:5:11: phases[0].rate: expected a number, got "fast"`,
		`s.yaml:6:5: phases[0].duraton: unknown field (did you mean "duration"?)`,
		`s.yaml:8:15: phases[1].duration: duration "7" needs a unit (e.g. 7s)`,
		`s.yaml:9:8: count: -1 is out of range`,
		`s.yaml:10:1: colour: unknown field`,
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d errors:\n%s", len(got), err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
	if d.Name != "demo" || len(d.Phases) != 2 || d.Phases[0].Name != "a" {
		t.Errorf("valid fields should still decode: %+v", d)
	}
}

func TestLocPointsAtFields(t *testing.T) {
	src := "name: x\nphases:\n  - name: a\n    rate: 5\n"
	var d doc
	if err := Unmarshal("f.yaml", []byte(src), &d); err != nil {
		t.Fatal(err)
	}
	pos, path := d.Phases[0].Loc.At("rate")
	if pos.Line != 4 || pos.Col != 11 || path != "phases[0].rate" {
		t.Errorf("At(rate) = %v %q", pos, path)
	}
	if !d.Phases[0].Loc.Has("rate") || d.Phases[0].Loc.Has("duration") {
		t.Error("Has() should tell written fields from defaults")
	}
	pos, path = d.Phases[0].Loc.At("duration")
	if pos.Line != 3 || path != "phases[0].duration" {
		t.Errorf("absent field should point at its mapping: %v %q", pos, path)
	}
}

func TestDuplicateKeysAndMerge(t *testing.T) {
	src := `base: &b {name: p, rate: 1, duration: 1s}
phases:
  - <<: *b
    rate: 9
  - name: q
    name: r
`
	type withBase struct {
		Base   phase   `yaml:"base"`
		Phases []phase `yaml:"phases"`
	}
	var d withBase
	err := Unmarshal("m.yaml", []byte(src), &d)
	if err == nil || !strings.Contains(err.Error(), "m.yaml:6:5: phases[1].name: duplicate key (first at line 5)") {
		t.Fatalf("want duplicate key error, got %v", err)
	}
	if p := d.Phases[0]; p.Name != "p" || p.Rate != 9 || p.Duration != time.Second {
		t.Errorf("merge: explicit keys override merged ones: %+v", p)
	}
}

func TestScalarsAndSyntax(t *testing.T) {
	var d doc
	err := Unmarshal("a.yaml", []byte("seed: 1e6\ncount: 1_000\non: true\nstart: 2025-11-28T00:00:00+03:00\n"), &d)
	if err != nil {
		t.Fatal(err)
	}
	if d.Seed != 1000000 || d.Count != 1000 || !d.On || d.Start.Hour() != 0 {
		t.Errorf("got %+v", d)
	}
	err = Unmarshal("b.yaml", []byte("name: [unclosed\n"), &d)
	if err == nil || !strings.HasPrefix(err.Error(), "b.yaml:") || !strings.Contains(err.Error(), "YAML syntax") {
		t.Errorf("syntax error should name the file: %v", err)
	}
	err = Unmarshal("c.yaml", []byte("name: a\n---\nname: b\n"), &d)
	if err == nil || !strings.Contains(err.Error(), "only one YAML document") {
		t.Errorf("want one-document error, got %v", err)
	}
	err = Unmarshal("d.yaml", []byte(""), &d)
	if err == nil || !strings.Contains(err.Error(), "empty document") {
		t.Errorf("want empty error, got %v", err)
	}
	err = Unmarshal("e.yaml", []byte("name: true\n"), &d)
	if err == nil || !strings.Contains(err.Error(), "quote it") {
		t.Errorf("bool into string should be an error: %v", err)
	}
}

func TestRawKeepsPositionsForLaterDecoding(t *testing.T) {
	var d doc
	if err := Unmarshal("r.yaml", []byte("name: x\nlater:\n  name: y\n  bogus: 1\n"), &d); err != nil {
		t.Fatal(err)
	}
	var p phase
	err := d.Later.Decode(&p)
	if err == nil || !strings.HasPrefix(err.Error(), "r.yaml:4:3: later.bogus: unknown field") {
		t.Errorf("got %v", err)
	}
	if p.Name != "y" {
		t.Errorf("valid fields decode: %+v", p)
	}
}

func TestBillionLaughsIsAnError(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	var m map[string]any
	type bomb struct {
		Items map[string][]any `yaml:",inline"`
	}
	var out bomb
	err := Unmarshal("bomb.yaml", []byte(b.String()), &out)
	if err == nil {
		t.Fatal("alias expansion should be bounded")
	}
	_ = m
}

func TestMarshalRoundTrip(t *testing.T) {
	src := "name: demo\nseed: 7\nphases:\n  - name: a\n    rate: 2.5\n    duration: 5m\n"
	var d doc
	if err := Unmarshal("rt.yaml", []byte(src), &d); err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "duration: 5m") {
		t.Errorf("durations should be written readably:\n%s", out)
	}
	var back doc
	if err := Unmarshal("rt2.yaml", out, &back); err != nil {
		t.Fatalf("re-decoding marshalled output: %v\n%s", err, out)
	}
	if back.Phases[0].Duration != 5*time.Minute || back.Seed != 7 || back.Phases[0].Rate != 2.5 {
		t.Errorf("round trip lost data: %+v", back)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 5 * time.Minute: "5m", 90 * time.Minute: "1h30m",
		2 * time.Hour: "2h", 250 * time.Millisecond: "250ms", 7 * 24 * time.Hour: "7d", 0: "0s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		back, err := ParseDuration(want)
		if err != nil || back != d {
			t.Errorf("ParseDuration(%q) = %v, %v", want, back, err)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		"name: demo\nseed: 1\nphases:\n  - {name: a, rate: 5, duration: 5s}\n",
		"a: &a [1, 2]\nb: *a\n",
		"phases: [{<<: {name: x}, rate: 1}]\n",
		"tags: {a: b, a: c}\n",
		"ptr: null\nlater: {x: [1, {y: 2}]}\n",
		"start: 2025-01-01\n",
		"- 1\n- 2\n",
		"name: !!binary aGVsbG8=\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		err := Unmarshal("fuzz.yaml", data, &d)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("errors must be Errors with at least one entry: %T %v", err, err)
			}
			return
		}
		if _, err := Marshal(d); err != nil {
			t.Fatalf("a decoded value must re-encode: %v", err)
		}
	})
}
