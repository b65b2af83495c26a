package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestCheckHistogramLogs(t *testing.T) {
	dir, _ := writeRun(t)
	dir.Close()
	variant := "seed000[buckets=10]"
	sum := &Summary{Variants: []SummaryVariant{{Name: variant, Ops: []OpStats{
		{Op: "carts.read", HistogramLog: HistogramLogPath(variant, "carts.read")},
		{Op: "carts.add_item", HistogramLog: HistogramLogPath(variant, "carts.add_item")},
	}}}}
	if p := CheckHistogramLogs(dir.Path, sum); p != nil {
		t.Fatalf("intact logs: %v", p)
	}
	read := filepath.Join(dir.Path, HistogramLogPath(variant, "carts.read"))
	add := filepath.Join(dir.Path, HistogramLogPath(variant, "carts.add_item"))
	orig, _ := os.ReadFile(read)
	lines := strings.SplitAfter(string(orig), "\n")
	var last int // the last interval line
	for i, l := range lines {
		if strings.Contains(l, ",") && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, `"`) {
			last = i
		}
	}
	for name, c := range map[string]struct {
		text, want string
	}{
		"garbage": {"\x7fELF\x02\x01\x01 binary\n", read + ":1: not an HdrHistogram interval line (want 4 comma-separated fields, got 1): the log is corrupt"},
		"binary":  {"\x7fELF\x02\x01\x01 binary, no newline", read + ":1: not an HdrHistogram interval line (want 4 comma-separated fields, got 2): the log is corrupt"},
		"flipped": {strings.Join(lines[:last], "") + flip(lines[last]), read + ":" + strconv.Itoa(last+1) + ": not an HdrHistogram interval line (zlib stream invalid checksum): the log is corrupt"},
		"torn":    {strings.Join(lines[:last], "") + lines[last][:len(lines[last])/2], read + ":" + strconv.Itoa(last+1) + ": the last line is cut short (a run killed while writing it): its interval is missing"},
	} {
		os.WriteFile(read, []byte(c.text), 0o644)
		p := CheckHistogramLogs(dir.Path, sum)
		if len(p) != 1 || p[0] != c.want {
			t.Errorf("%s:\n got %q\nwant %q", name, p, c.want)
		}
	}
	os.WriteFile(read, orig, 0o644)
	os.Remove(add)
	if p := CheckHistogramLogs(dir.Path, sum); len(p) != 1 || p[0] != add+": missing (summary.json names it)" {
		t.Errorf("missing: %q", p)
	}
	sum.Variants[0].Ops[1].HistogramLog = "../../etc/passwd"
	if p := CheckHistogramLogs(dir.Path, sum); len(p) != 1 || !strings.Contains(p[0], `the histogram log path "../../etc/passwd" leaves the directory`) {
		t.Errorf("outside: %q", p)
	}
}

// flip changes one character near the end of an interval line's base64 payload (in the
// zlib stream's Adler-32 checksum), so only the checksum can tell.
func flip(line string) string {
	i := len(strings.TrimRight(line, "\n=")) - 3
	b := []byte(line)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestReadSeriesBoundsPointsPerVariant(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, `{"variant":"a","start_s":%d,"end_s":%d,"completed":1,"target_rate":%d,"p99_ms":%d,"errors":{"timeout":1}}`+"\n", i, i+1, i%2, i)
		if i < 3 {
			fmt.Fprintf(&b, `{"variant":"b","start_s":%d,"end_s":%d,"completed":2}`+"\n", i, i+1)
		}
	}
	os.WriteFile(filepath.Join(dir, TimeseriesFile), []byte(b.String()), 0o644)
	sr, err := ReadSeries(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	a := sr.Points["a"]
	if len(a) > 100 || len(a) < 50 || sr.Step["a"] != 16 {
		t.Fatalf("a: %d points at step %d", len(a), sr.Step["a"])
	}
	var completed, timeouts int64
	var p99 float64
	for i, p := range a {
		completed += p.Completed
		timeouts += p.Errors["timeout"]
		p99 = max(p99, p.P99)
		if i > 0 && p.StartS != a[i-1].EndS {
			t.Fatalf("point %d starts at %g, the previous ends at %g", i, p.StartS, a[i-1].EndS)
		}
		if i < len(a)-1 && (p.EndS-p.StartS != 16 || p.TargetRate != 0.5) {
			t.Fatalf("point %d: %+v", i, p)
		}
	}
	if completed != 1000 || timeouts != 1000 || p99 != 999 || a[0].StartS != 0 || a[len(a)-1].EndS != 1000 {
		t.Errorf("completed %d, timeouts %d, p99 %g, span %g-%g", completed, timeouts, p99, a[0].StartS, a[len(a)-1].EndS)
	}
	if len(sr.Points["b"]) != 3 || sr.Step["b"] != 0 {
		t.Errorf("b: %+v", sr.Points["b"])
	}
}

func TestCheckRunSize(t *testing.T) {
	// Black Friday: 14 variants, 25 operation types, 10 minutes: far inside the limits.
	if err := CheckRunSize(14, 25, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	// Its server.json limit binds first: 262,144 variant-seconds.
	if err := CheckRunSize(14, 25, 5*time.Hour); err != nil {
		t.Fatalf("5h of 14 variants: %v", err)
	}
	err := CheckRunSize(14, 25, 6*time.Hour)
	want := "the results of 14 variant(s) over 6h would be about 7.93 GiB, and server.json would reach about 591 MiB, over the 512 MiB limit of a server-side figures file that report and gate read: at most 5.2h for this scenario"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// One variant: an .hlog's own limit never binds before server.json's.
	if err := CheckRunSize(1, 25, 72*time.Hour); err != nil {
		t.Fatalf("72h of one variant: %v", err)
	}
	if err := CheckRunSize(1, 25, 1000000*time.Hour); err == nil || !strings.Contains(err.Error(), "at most 72.8h") {
		t.Fatalf("err = %v", err)
	}
}

// A line whose histogram header asks for another geometry is refused before it is
// decoded: one such line could otherwise allocate 64 MB.
func TestIntervalOfAnotherGeometryIsRefused(t *testing.T) {
	h := hdr.New(1, 1<<62, 5)
	h.RecordValue(42)
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.hlog")
	os.WriteFile(p, []byte("0.000,1.000,0.042,"+string(b)+"\n"), 0o644)
	err = EachInterval(p, func(IntervalHistogram) error { t.Fatal("decoded"); return nil })
	want := p + ":1: a histogram of 5 significant digits from 1 to 4611686018427387904 ns, not the harness's 3 from 1000 to 3600000000000"
	if err == nil || err.Error() != want || !errors.Is(err, ErrUnreadable) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// A version-1 directory's series for charts is converted as ReadTimeseries converts it.
func TestReadSeriesConvertsVersion1(t *testing.T) {
	const dir = "testdata/v1-sim"
	pts, err := ReadTimeseries(dir)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := ReadSeries(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n, unserved := 0, int64(0)
	for _, p := range pts {
		got := sr.Points[p.Variant]
		if len(got) == 0 || got[0].Unserved < 0 {
			t.Fatalf("variant %s missing", p.Variant)
		}
		unserved += p.Unserved
		n++
	}
	var m int
	var su int64
	for _, ps := range sr.Points {
		m += len(ps)
		for _, p := range ps {
			su += p.Unserved
		}
	}
	if m != n || su != unserved || unserved == 0 {
		t.Fatalf("ReadSeries: %d points, %d unserved; ReadTimeseries: %d points, %d unserved", m, su, n, unserved)
	}
}
