package results

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadDir reads a results directory made of arbitrary files: summary.json,
// timeseries.jsonl, one interval log and hotspots.json. Every reader either reads or
// returns an error that is ErrUnreadable (bad input, exit 2), naming the file; none
// panics or reads without bound. The time series read for charts keeps every count.
func FuzzReadDir(f *testing.F) {
	const log = "histograms/v/op.hlog"
	d, _ := writeRun(f)
	variant := "seed000[buckets=10]"
	if err := d.WriteSummary(&Summary{Schema: Schema, Version: Version, Variants: []SummaryVariant{{Name: variant, Ops: []OpStats{
		{Op: "carts.read", HistogramLog: log}, // where the fuzzed log goes
	}}}}); err != nil {
		f.Fatal(err)
	}
	d.Close()
	seed := d.Path
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(seed, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read(SummaryFile), read(TimeseriesFile), read(HistogramLogPath(variant, "carts.read")), []byte(`{"schema":"shardbench/hotspots","variants":[]}`))
	f.Add([]byte(`{"schema":"shardbench/summary","version":1,"variants":[{"name":"v","ops":[{"op":"op","histogram_log":"`+log+`"}]}]}`),
		[]byte("{\"variant\":\"v\",\"start_s\":0,\"end_s\":1,\"completed\":3}\n{\"variant\":\"v\",\"start_s\":1,"),
		[]byte("Tag=service,0.0,1.0,0.5,HISTFAAAACB4nJNpmSzMwMDAxAABzFCaEUzOmNZg/wEiAAKLAms=\n0.0,1"), []byte("{"))
	f.Add([]byte(`{"schema":"shardbench/summary","version":99}`), []byte("\n\n"), []byte("#comment\n\"StartTimestamp\"\n"), []byte(`{"schema":"x"}`))
	f.Fuzz(func(t *testing.T, summary, timeseries, hlog, hotspots []byte) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{SummaryFile: summary, TimeseriesFile: timeseries, log: hlog, HotspotsFile: hotspots} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bad := func(what string, err error) {
			if err != nil && !errors.Is(err, ErrUnreadable) {
				t.Fatalf("%s: an error that is not ErrUnreadable: %T %v", what, err, err)
			}
		}
		sum, err := Read(dir)
		bad("Read", err)
		if err == nil {
			CheckHistogramLogs(dir, sum)
		}
		_, err = ReadHotspots(dir)
		bad("ReadHotspots", err)
		bad("EachInterval", EachInterval(filepath.Join(dir, filepath.FromSlash(log)), func(IntervalHistogram) error { return nil }))
		pts, _, err := ReadTimeseriesChecked(dir)
		bad("ReadTimeseries", err)
		sr, serr := ReadSeries(dir, 3)
		bad("ReadSeries", serr)
		if (err == nil) != (serr == nil) {
			t.Fatalf("ReadTimeseries and ReadSeries disagree: %v, %v", err, serr)
		}
		if err != nil {
			return
		}
		// Charts read at a coarser step keep every count and the whole span.
		want := map[string]int64{}
		for _, p := range pts {
			want[p.Variant] += p.Completed + p.Dropped + p.Unserved
		}
		for v, ps := range sr.Points {
			if len(ps) > 3 {
				t.Fatalf("variant %q: %d points, at most 3", v, len(ps))
			}
			var got int64
			for _, p := range ps {
				got += p.Completed + p.Dropped + p.Unserved
			}
			if got != want[v] {
				t.Fatalf("variant %q: %d operations in the series read for charts, %d in the file", v, got, want[v])
			}
		}
	})
}
