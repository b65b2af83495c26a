package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

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
			return nil, nil, fmt.Errorf("%s: converting version 1: %w", filepath.Join(dir, SummaryFile), err)
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
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: not a results directory (no %s)", dir, SummaryFile)
		}
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q is not %q", path, s.Schema, Schema)
	}
	if s.Version > Version {
		return nil, fmt.Errorf("%s: version %d is newer than this shardbench reads (%d); upgrade shardbench", path, s.Version, Version)
	}
	return &s, nil
}

// ReadTimeseries loads timeseries.jsonl. A torn last line (a run killed mid-write) is
// ignored; any other bad line is an error naming its line number. The points of a
// version-1 directory are converted as its summary is (convert.go).
func ReadTimeseries(dir string) ([]Point, error) {
	pts, err := readPoints(dir)
	if err != nil || len(pts) == 0 || summaryVersion(dir) >= 2 {
		return pts, err
	}
	s, changed, err := read(dir)
	if err != nil || len(changed) == 0 {
		return pts, nil // a summary that does not read leaves the points as written
	}
	return pts, convertPointsV1(dir, s, changed, pts)
}

// summaryVersion is the version of the directory's summary.json (Version when it has
// none that reads: nothing to convert).
func summaryVersion(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return Version
	}
	var h struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
	}
	if json.Unmarshal(b, &h) != nil || h.Schema != Schema {
		return Version
	}
	return h.Version
}

func readPoints(dir string) ([]Point, error) {
	path := filepath.Join(dir, TimeseriesFile)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []Point
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	var pending error
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		var p Point
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			pending = fmt.Errorf("%s:%d: %w", path, line, err)
			continue
		}
		out = append(out, p)
	}
	return out, sc.Err()
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseHistogramLog(path, f)
}

func parseHistogramLog(path string, r io.Reader) ([]IntervalHistogram, error) {
	var out []IntervalHistogram
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, `"StartTimestamp"`) {
			continue
		}
		tag := ""
		if strings.HasPrefix(text, "Tag=") {
			t, rest, ok := strings.Cut(text, ",")
			if !ok {
				return nil, fmt.Errorf("%s:%d: malformed tagged line", path, line)
			}
			tag, text = strings.TrimPrefix(t, "Tag="), rest
		}
		parts := strings.Split(text, ",")
		if len(parts) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 comma-separated fields, got %d", path, line, len(parts))
		}
		start, err1 := strconv.ParseFloat(parts[0], 64)
		length, err2 := strconv.ParseFloat(parts[1], 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		h, err := hdr.Decode([]byte(parts[3]))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, IntervalHistogram{Tag: tag, StartS: start, EndS: start + length, Hist: h})
	}
	return out, sc.Err()
}
