package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// ErrUnreadable is wrapped by every error about what a results directory holds: a file
// missing, not a regular file, over its size limit, not valid JSON, of another schema or
// a newer version, a bad line. It is bad input (the CLI exits 2), never a failed run.
var ErrUnreadable = errors.New("unreadable results")

// readError wraps an error as ErrUnreadable, keeping its message and its own wrapped
// errors (fs.ErrNotExist, inputfile.ErrTooLarge).
type readError struct{ err error }

func (e *readError) Error() string   { return e.err.Error() }
func (e *readError) Unwrap() []error { return []error{e.err, ErrUnreadable} }

func unreadable(err error) error {
	if err == nil || errors.Is(err, ErrUnreadable) {
		return err
	}
	return &readError{err}
}

// unreadablef is an ErrUnreadable with a message.
func unreadablef(format string, args ...any) error {
	return &readError{fmt.Errorf(format, args...)}
}

// readJSON reads one JSON document of a results directory through the bounded reader
// into v. It reports false, nil when the file does not exist; errors name the file and,
// for bad JSON, the line and column.
func readJSON(path string, k inputfile.Kind, v any) (bool, error) {
	b, err := inputfile.ReadFile(path, k)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, unreadable(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, unreadable(jsonError(path, b, err))
	}
	return true, nil
}

// jsonError gives a JSON decoding error the file's line and column, and says what is
// wrong without quoting the file.
func jsonError(path string, b []byte, err error) error {
	var off int64 = -1
	msg := err.Error()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
		msg = "not valid JSON: " + se.Error()
	case errors.As(err, &te):
		off = te.Offset
		field := te.Field
		if field == "" {
			field = "the document"
		}
		msg = fmt.Sprintf("%s: a JSON %s where %s is expected", field, te.Value, te.Type)
	}
	if off < 0 || off > int64(len(b)) {
		return fmt.Errorf("%s: %s", path, msg)
	}
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(b[:off], '\n')
	return fmt.Errorf("%s:%d:%d: %s", path, line, col, msg)
}

// Read loads summary.json from a results directory. A summary of an older version is
// converted to this one (convert.go), and every variant's Coverage is recomputed from its
// operations.
func Read(dir string) (*Summary, error) {
	s, _, err := read(dir)
	return s, err
}

// read is Read, also telling which variants a conversion changed.
func read(dir string) (*Summary, map[string]bool, error) {
	s, err := readRaw(dir)
	if err != nil {
		return nil, nil, err
	}
	var changed map[string]bool
	if s.Version < 2 {
		if changed, err = convertV1(s); err != nil {
			return nil, nil, unreadablef("%s: converting version 1: %w", filepath.Join(dir, SummaryFile), err)
		}
	}
	for i := range s.Variants {
		s.Variants[i].Coverage = CoverageOf(s.Variants[i].Ops)
	}
	return s, changed, nil
}

// readRaw loads summary.json as written.
func readRaw(dir string) (*Summary, error) {
	path := filepath.Join(dir, SummaryFile)
	var s Summary
	found, err := readJSON(path, inputfile.Summary, &s)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &readError{&inputfile.Error{Path: dir, Problem: "not a results directory (no " + SummaryFile + ")", Err: fs.ErrNotExist}}
	}
	if s.Schema != Schema {
		return nil, unreadablef("%s: schema %s is not %q", path, quoteShort(s.Schema), Schema)
	}
	if s.Version > Version {
		return nil, unreadablef("%s: version %d is newer than this shardbench reads (%d); upgrade shardbench", path, s.Version, Version)
	}
	return &s, nil
}

// quoteShort quotes a value read from a file for an error: short values as themselves,
// longer ones by their length.
func quoteShort(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("(%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// ReadTimeseries loads timeseries.jsonl (nil when absent). A torn last line (a run
// killed mid-write) is left out; any other bad line is an error naming its line. What is
// shown to a user reads it with ReadTimeseriesChecked or ReadSeries, which say so. The
// points of a version-1 directory are converted as its summary is (convert.go).
func ReadTimeseries(dir string) ([]Point, error) {
	pts, _, err := ReadTimeseriesChecked(dir)
	return pts, err
}

// ReadTimeseriesChecked is ReadTimeseries with warnings describing what was left out (a
// torn last line).
func ReadTimeseriesChecked(dir string) ([]Point, []string, error) {
	var out []Point
	warnings, err := eachPoint(dir, func(p Point) error {
		out = append(out, p)
		return nil
	})
	if err != nil || len(out) == 0 || summaryVersion(dir) >= 2 {
		return out, warnings, err
	}
	s, changed, err := read(dir)
	if err != nil || len(changed) == 0 {
		return out, warnings, nil // a summary that does not read leaves the points as written
	}
	return out, warnings, unreadable(convertPointsV1(dir, s, changed, out))
}

// needsPointConversion reports a version-1 directory whose time series the conversion
// to version 2 changes (convertV1 changed a variant).
func needsPointConversion(dir string) bool {
	if summaryVersion(dir) >= 2 {
		return false
	}
	_, changed, err := read(dir)
	return err == nil && len(changed) > 0
}

// summaryVersion is the version of the directory's summary.json (Version when it has
// none that reads: nothing to convert).
func summaryVersion(dir string) int {
	var h struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
	}
	found, err := readJSON(filepath.Join(dir, SummaryFile), inputfile.Summary, &h)
	if !found || err != nil || h.Schema != Schema {
		return Version
	}
	return h.Version
}

// Series is timeseries.jsonl read for charts (ReadSeries).
type Series struct {
	// Points holds each variant's points in time order.
	Points map[string][]Point
	// Step is, for each variant read at a coarser step, the intervals per point (2, 4,
	// 8 ...): its neighbours were merged as Point.Absorb does.
	Step map[string]int
	// Warnings say what was left out (a torn last line).
	Warnings []string
}

// ReadSeries loads timeseries.jsonl grouped by variant with at most maxPoints points per
// variant: a longer series is read at a coarser step, so memory is bounded by maxPoints
// whatever the file's length.
func ReadSeries(dir string, maxPoints int) (*Series, error) {
	maxPoints = max(maxPoints, 2)
	out := map[string][]Point{}
	step := map[string]int{} // intervals per point, per variant
	fill := map[string]int{} // intervals in the last point
	each := eachPoint
	if needsPointConversion(dir) {
		// A version-1 directory whose variants the conversion changes has its points
		// converted as a whole (convert.go): it is read whole, then stepped.
		each = func(dir string, fn func(Point) error) ([]string, error) {
			pts, warnings, err := ReadTimeseriesChecked(dir)
			for _, p := range pts {
				if err == nil {
					err = fn(p)
				}
			}
			return warnings, err
		}
	}
	warnings, err := each(dir, func(p Point) error {
		v := p.Variant
		if step[v] == 0 {
			step[v] = 1
		}
		pts := out[v]
		if len(pts) == maxPoints && fill[v] == step[v] {
			// Halve the resolution: neighbours merge pairwise; an odd last point keeps
			// its span and takes the next intervals.
			n := len(pts)
			for i := 0; i < n/2; i++ {
				a := pts[2*i]
				a.Absorb(pts[2*i+1])
				pts[i] = a
			}
			if n%2 == 1 {
				pts[n/2] = pts[n-1]
			} else {
				fill[v] = 2 * step[v]
			}
			pts = pts[:(n+1)/2]
			step[v] *= 2
			out[v] = pts
		}
		if n := len(pts); n > 0 && fill[v] < step[v] {
			pts[n-1].Absorb(p)
			fill[v]++
			return nil
		}
		out[v] = append(pts, p)
		fill[v] = 1
		return nil
	})
	if err != nil {
		return nil, err
	}
	sr := &Series{Points: out, Step: map[string]int{}, Warnings: warnings}
	for v, s := range step {
		if s > 1 {
			sr.Step[v] = s
		}
	}
	return sr, nil
}

// Absorb merges the next interval o into p (the same variant, o just after p): counts
// add, rates are averaged over the joint span, the in-flight gauge and every latency
// figure take the higher of the two (a percentile of two intervals cannot be computed
// from theirs: the higher one is what the worse interval showed).
func (p *Point) Absorb(o Point) {
	d1, d2 := p.EndS-p.StartS, o.EndS-o.StartS
	if d := d1 + d2; d > 0 {
		p.TargetRate = (p.TargetRate*d1 + o.TargetRate*d2) / d
		p.AchievedRate = (p.AchievedRate*d1 + o.AchievedRate*d2) / d
	}
	p.EndS = max(p.EndS, o.EndS)
	p.Completed += o.Completed
	p.OK += o.OK
	p.Late += o.Late
	p.Dropped += o.Dropped
	p.Abandoned += o.Abandoned
	p.Unserved += o.Unserved
	if len(o.Errors) > 0 {
		m := make(map[string]int64, len(p.Errors)+len(o.Errors))
		for k, v := range p.Errors {
			m[k] = v
		}
		for k, v := range o.Errors {
			m[k] += v
		}
		p.Errors = m
	}
	p.InFlight = max(p.InFlight, o.InFlight)
	p.P50, p.P90, p.P99 = max(p.P50, o.P50), max(p.P90, o.P90), max(p.P99, o.P99)
	p.P999, p.Max = max(p.P999, o.P999), max(p.Max, o.Max)
	p.ServiceP99, p.LagP99 = max(p.ServiceP99, o.ServiceP99), max(p.LagP99, o.LagP99)
	if o.Phase != p.Phase && !strings.HasSuffix(p.Phase, "…") {
		p.Phase += "…"
	}
}

// eachPoint calls fn with each point of timeseries.jsonl in file order. A bad last line
// is a write cut short by a killed run: it is left out with a warning. A bad line before
// the last is an error naming it.
func eachPoint(dir string, fn func(Point) error) ([]string, error) {
	path := filepath.Join(dir, TimeseriesFile)
	var bad error // the last line read, when it did not parse
	err := inputfile.Lines(path, inputfile.Timeseries, func(line []byte, n int, complete bool) error {
		if bad != nil {
			return bad
		}
		var p Point
		if err := json.Unmarshal(line, &p); err != nil {
			bad = unreadablef("%s:%d: not a time series point: %s", path, n, jsonMessage(err))
			return nil
		}
		return fn(p)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, unreadable(err)
	}
	if bad != nil {
		return []string{bad.Error() + " (the last line, cut short when the run was killed while writing it: that interval is left out)"}, nil
	}
	return nil, nil
}

// jsonMessage is a JSON error without quoting the input.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s is a JSON %s, expected %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// IntervalHistogram is one line of an interval log.
type IntervalHistogram struct {
	Tag    string
	StartS float64
	EndS   float64
	Hist   *hdr.Histogram
}

// ReadHistogramLog reads every interval (all tags) of an HdrHistogram interval log.
func ReadHistogramLog(path string) ([]IntervalHistogram, error) {
	var out []IntervalHistogram
	err := EachInterval(path, func(ih IntervalHistogram) error {
		out = append(out, ih)
		return nil
	})
	return out, err
}

// EachInterval calls fn with each interval of an HdrHistogram interval log, read through
// the bounded reader; a bad line is an error naming it. Each line is checked as
// CheckHistogramLogs does before it is decoded, so a crafted header cannot make one
// histogram of unbounded size.
func EachInterval(path string, fn func(IntervalHistogram) error) error {
	c := &logChecker{}
	err := inputfile.Lines(path, inputfile.HistogramLog, func(b []byte, n int, _ bool) error {
		l, ok, err := parseLogLine(b)
		if err == nil && ok {
			err = c.payload(l.payload)
		}
		if err != nil {
			return unreadablef("%s:%d: %v", path, n, err)
		}
		if !ok {
			return nil
		}
		h, err := hdr.Decode(l.payload)
		if err != nil {
			return unreadablef("%s:%d: %v", path, n, err)
		}
		return fn(IntervalHistogram{Tag: l.tag, StartS: l.start, EndS: l.start + l.length, Hist: h})
	})
	return unreadable(err)
}

// logLine is one interval line of an .hlog, its histogram still encoded.
type logLine struct {
	tag           string
	start, length float64
	payload       []byte // base64 of the compressed histogram
}

// parseLogLine splits "[Tag=T,]start,length,max,histogram"; ok is false for comments,
// the legend and blank lines.
func parseLogLine(b []byte) (logLine, bool, error) {
	text := strings.TrimSpace(string(b))
	if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, `"StartTimestamp"`) {
		return logLine{}, false, nil
	}
	var l logLine
	if strings.HasPrefix(text, "Tag=") {
		t, rest, ok := strings.Cut(text, ",")
		if !ok {
			return l, false, errors.New("malformed tagged line")
		}
		l.tag, text = strings.TrimPrefix(t, "Tag="), rest
	}
	parts := strings.Split(text, ",")
	if len(parts) != 4 {
		return l, false, fmt.Errorf("want 4 comma-separated fields, got %d", len(parts))
	}
	var err1, err2 error
	l.start, err1 = strconv.ParseFloat(parts[0], 64)
	l.length, err2 = strconv.ParseFloat(parts[1], 64)
	if err := errors.Join(err1, err2); err != nil {
		return l, false, errors.New("the interval's start and length must be numbers")
	}
	l.payload = []byte(parts[3])
	return l, true, nil
}

// RunTraces lists what a run writes as it goes that dir holds: a time series with lines,
// interval logs under histograms/. A directory with traces and no summary.json is an
// incomplete run (killed before its first checkpoint, or the summary was removed), never
// a plan or an analysis, which write neither.
func RunTraces(dir string) []string {
	var out []string
	if st, err := os.Stat(filepath.Join(dir, TimeseriesFile)); err == nil && st.Size() > 0 {
		out = append(out, TimeseriesFile)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, HistogramsDir, "*", "*.hlog"))
	if len(logs) > 0 {
		out = append(out, HistogramsDir+"/*/*.hlog")
	}
	return out
}

// CheckRunTraces returns an error naming dir as an incomplete run when it holds a run's
// traces (RunTraces) but no summary.json; nil otherwise.
func CheckRunTraces(dir string) error {
	traces := RunTraces(dir)
	if len(traces) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return unreadablef("%s: incomplete results directory: it holds a run's %s but no %s (killed before its first checkpoint, or the file was removed); nothing to report",
		dir, strings.Join(traces, " and "), SummaryFile)
}
