package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Dir is a results directory being written.
type Dir struct {
	Path string

	mu    sync.Mutex
	addMu sync.Mutex // read-modify-write of hotspots.json and server.json
	// order is each variant's place in the scenario (SetVariantOrder): variants finish in
	// any order, and hotspots.json and server.json list them in the scenario's, as
	// summary.json does, so that two runs of one seed write the same files.
	order map[string]int
	// server is server.json as AddServer last wrote it (nil: read from the file): a
	// simulated run's is tens of megabytes, and decoding it again for every variant that
	// finishes was most of the time its variants spent reporting, at the run's end
	// where they finish together and wait for one another.
	server *ServerReport
	// serverParts is each variant of server as writeServer lays it out (serverPart), by
	// name: a variant is encoded once, not again every time another one finishes.
	serverParts map[string][]byte
	ts          *os.File
	tw          *bufio.Writer
	tsGate      flushGate
}

// flushGate spaces the flushes of a results file: a killed run keeps what was measured
// up to flushEvery ago. A real run's intervals come a wall second apart, so each is
// flushed as it comes, as before; a simulated run writes hundreds of intervals per wall
// second, and flushing each one's files was a write system call per operation type per
// interval.
type flushGate struct{ last time.Time }

const flushEvery = 500 * time.Millisecond

// due reports whether the files should be flushed now (and if so, starts a new wait).
func (g *flushGate) due() bool {
	now := time.Now()
	if now.Sub(g.last) < flushEvery {
		return false
	}
	g.last = now
	return true
}

// Create makes a new results directory. It refuses to write into a directory that already
// holds results, so an old run is never silently overwritten.
func Create(path string) (*Dir, error) {
	if _, err := os.Stat(filepath.Join(path, SummaryFile)); err == nil {
		return nil, fmt.Errorf("%s already holds results (summary.json); choose another --out", path)
	}
	if err := os.MkdirAll(filepath.Join(path, HistogramsDir), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(path, TimeseriesFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &Dir{Path: path, ts: f, tw: bufio.NewWriterSize(f, 64<<10)}, nil
}

// At is the results directory at path as it stands, for adding one document to it
// (gate.json, capacity.json, verdict.json, fidelity.json) after the run wrote it.
func At(path string) *Dir { return &Dir{Path: path} }

// WriteFile writes a file inside the directory atomically (temp file + rename), so a
// reader never sees a half-written file even if the run is killed mid-write.
func (d *Dir) WriteFile(name string, data []byte) error {
	return WriteFileAtomic(filepath.Join(d.Path, name), data)
}

// WriteFileAtomic writes path via a temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteJSON writes v as indented JSON, atomically.
func (d *Dir) WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return d.WriteFile(name, append(b, '\n'))
}

// WriteSummary writes summary.json atomically.
func (d *Dir) WriteSummary(s *Summary) error {
	s.Schema, s.Version = Schema, Version
	return d.WriteJSON(SummaryFile, s)
}

// Close flushes the time series.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ts == nil {
		return nil
	}
	err := errors.Join(d.tw.Flush(), d.ts.Close())
	d.ts = nil
	return err
}

func (d *Dir) writePoint(p *Point) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ts == nil {
		return errors.New("results directory is closed")
	}
	if _, err := d.tw.Write(append(b, '\n')); err != nil {
		return err
	}
	if !d.tsGate.due() {
		return nil
	}
	return d.tw.Flush()
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=+-]+`)

// SafeName turns a variant or operation name into a file name.
func SafeName(s string) string {
	s = unsafeName.ReplaceAllString(s, "_")
	s = strings.Trim(s, "._")
	if s == "" {
		s = "_"
	}
	return s
}

// HistogramLogPath is the relative path of a variant's operation log.
func HistogramLogPath(variant, op string) string {
	return filepath.ToSlash(filepath.Join(HistogramsDir, SafeName(variant), SafeName(op)+".hlog"))
}

// Timeline tells a variant writer the schedule's target rate and phase names.
type Timeline struct {
	// Expected returns the number of operations of the whole run intended to start in
	// [from, to).
	Expected func(from, to time.Duration) float64
	// Share is the part of the run this process states as its target: a shard's even
	// share, 1/N (0: the whole run).
	Share float64
	// Phase names the phase running at t.
	Phase func(t time.Duration) string
}

// Target is the operations this process was due to serve in an interval: its share of
// the run's served schedule. Every operation of the run due in the interval that the
// variant does not serve is left out before the share is taken (a shard's own unserved
// operations are not its even share of them), so the shards' targets add up to the
// whole run's.
func (tl Timeline) Target(iv *metrics.Interval) float64 {
	share := tl.Share
	if share == 0 {
		share = 1
	}
	return ServedTarget(tl.Expected(iv.Start, iv.End), iv.All.Unserved+iv.ForeignUnserved) * share
}

// VariantWriter writes one variant's interval logs and time series. Its Sink method is a
// metrics.Sink.
type VariantWriter struct {
	dir      *Dir
	name     string
	ops      []string
	start    time.Time
	timeline Timeline
	logs     []*hlogFile
	enc      *intervalEncoder
	gate     flushGate
}

// hlogBuffer is an operation log's write buffer. A simulated run writes its logs as fast
// as it computes them (Black Friday: 300 MB in 1.6 million lines), and at bufio's default
// of 4 KiB their write system calls took more CPU than formatting the lines; the flush
// gate, not the buffer's size, bounds what a killed run loses.
const hlogBuffer = 64 << 10

type hlogFile struct {
	f *os.File
	w *bufio.Writer
	l *hdr.HistogramLogWriter
}

// Variant starts writing a variant whose schedule started at wall time start.
func (d *Dir) Variant(name string, ops []string, start time.Time, tl Timeline) *VariantWriter {
	return &VariantWriter{dir: d, name: name, ops: ops, start: start, timeline: tl, logs: make([]*hlogFile, len(ops)), enc: newIntervalEncoder()}
}

func (w *VariantWriter) log(op int) (*hlogFile, error) {
	if w.logs[op] != nil {
		return w.logs[op], nil
	}
	path := filepath.Join(w.dir.Path, HistogramLogPath(w.name, w.ops[op]))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, hlogBuffer)
	l := hdr.NewHistogramLogWriter(bw)
	err = errors.Join(
		l.OutputLogFormatVersion(),
		l.OutputComment(fmt.Sprintf("[shardbench variant=%s op=%s values=nanoseconds untagged=response-time Tag=service Tag=lag]", SafeName(w.name), SafeName(w.ops[op]))),
		l.OutputStartTime(w.start.UnixMilli()),
		l.OutputLegend(),
		bw.Flush(),
	)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.logs[op] = &hlogFile{f: f, w: bw, l: l}
	return w.logs[op], nil
}

// ServedTarget is the operations a variant was due to serve in an interval: the
// schedule's expected count less the operations that came due but are not served.
func ServedTarget(expected float64, unserved int64) float64 {
	return max(expected-float64(unserved), 0)
}

// Sink writes one interval: a line per histogram in each active operation's log (an
// operation the variant does not serve has no log), and a time-series point.
func (w *VariantWriter) Sink(iv *metrics.Interval) error {
	startMs, endMs := iv.Start.Milliseconds(), iv.End.Milliseconds()
	for i, set := range iv.Ops {
		if set == nil || set.Scheduled() == 0 {
			continue
		}
		lf, err := w.log(i)
		if err != nil {
			return err
		}
		if err := w.enc.writeLine(lf.w, "", startMs, endMs, &set.Response); err != nil {
			return err
		}
		if set.OnTime {
			// The same values as the response times: the same encoding.
			err = w.enc.writeEncoded(lf.w, "service", startMs, endMs, set.Response.Max())
		} else {
			err = w.enc.writeLine(lf.w, "service", startMs, endMs, &set.Service)
		}
		if err != nil {
			return err
		}
		if err := w.enc.writeLine(lf.w, "lag", startMs, endMs, &set.Lag); err != nil {
			return err
		}
	}
	if w.gate.due() {
		for _, lf := range w.logs {
			if lf == nil {
				continue
			}
			if err := lf.w.Flush(); err != nil {
				return err
			}
		}
	}
	return w.dir.writePoint(w.point(iv))
}

func (w *VariantWriter) point(iv *metrics.Interval) *Point {
	a := iv.All
	secs := (iv.End - iv.Start).Seconds()
	p := &Point{
		Variant:   w.name,
		StartS:    iv.Start.Seconds(),
		EndS:      iv.End.Seconds(),
		Completed: a.Completed,
		OK:        a.OK,
		Errors:    ErrorMap(&a.Counters),
		Late:      a.Late,
		Dropped:   a.Dropped,
		Abandoned: a.Abandoned,
		Unserved:  a.Unserved,
		InFlight:  iv.InFlight,
	}
	if w.timeline.Phase != nil {
		p.Phase = w.timeline.Phase(iv.Start)
	}
	if secs > 0 {
		p.AchievedRate = float64(a.Completed) / secs
		if w.timeline.Expected != nil {
			p.TargetRate = w.timeline.Target(iv) / secs
		}
	}
	if a.Response.TotalCount() > 0 {
		q := a.Response.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9})
		p.P50, p.P90, p.P99, p.P999 = ms(q[0]), ms(q[1]), ms(q[2]), ms(q[3])
		p.Max = ms(a.Response.Max())
		p.ServiceP99 = ms(a.Service.ValueAtPercentile(99))
		p.LagP99 = ms(a.Lag.ValueAtPercentile(99))
	}
	return p
}

// Close flushes and closes the variant's logs.
func (w *VariantWriter) Close() error {
	var errs []error
	for _, lf := range w.logs {
		if lf != nil {
			errs = append(errs, lf.w.Flush(), lf.f.Close())
		}
	}
	return errors.Join(errs...)
}

// SetVariantOrder gives the order in which hotspots.json and server.json list the
// variants: the scenario's. A variant not named comes after those named.
func (d *Dir) SetVariantOrder(names []string) {
	d.addMu.Lock()
	defer d.addMu.Unlock()
	d.order = make(map[string]int, len(names))
	for i, n := range names {
		d.order[n] = i
	}
}
