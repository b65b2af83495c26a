package live

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Format is an exposition format.
type Format int

// Exposition formats.
const (
	Text        Format = iota // Prometheus text format 0.0.4
	OpenMetrics               // OpenMetrics 1.0 text
)

// Content types of the formats.
const (
	TextContentType        = "text/plain; version=0.0.4; charset=utf-8"
	OpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)

// Negotiate picks the format an Accept header asks for: OpenMetrics when it names it,
// the Prometheus text format otherwise.
func Negotiate(accept string) Format {
	if strings.Contains(accept, "application/openmetrics-text") {
		return OpenMetrics
	}
	return Text
}

// family kinds
const (
	counter   = "counter"
	gauge     = "gauge"
	histKind  = "histogram"
	totalSufx = "_total"
)

// writer writes families in one of the formats. The Prometheus text format names a
// counter family with its _total suffix; OpenMetrics names the family without it and its
// samples with it.
type writer struct {
	w   *bufio.Writer
	fmt Format
}

func (w *writer) family(name, kind, help string) {
	if kind == counter && w.fmt == Text {
		name += totalSufx
	}
	w.w.WriteString("# HELP ")
	w.w.WriteString(name)
	w.w.WriteByte(' ')
	w.w.WriteString(escapeHelp(help))
	w.w.WriteString("\n# TYPE ")
	w.w.WriteString(name)
	w.w.WriteByte(' ')
	w.w.WriteString(kind)
	w.w.WriteByte('\n')
}

// sample writes one line: name{labels} value. labels alternate names and values.
func (w *writer) sample(name string, value float64, labels ...string) {
	w.w.WriteString(name)
	if len(labels) > 0 {
		w.w.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				w.w.WriteByte(',')
			}
			w.w.WriteString(labels[i])
			w.w.WriteString(`="`)
			w.w.WriteString(escapeLabel(labels[i+1]))
			w.w.WriteByte('"')
		}
		w.w.WriteByte('}')
	}
	w.w.WriteByte(' ')
	w.w.WriteString(formatValue(value))
	w.w.WriteByte('\n')
}

func formatValue(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

// Write renders every family in format f.
func (r *Registry) Write(out io.Writer, f Format) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := &writer{w: bufio.NewWriter(out), fmt: f}

	// A gauge named _info, as Prometheus's own clients expose build information in both
	// formats (the OpenMetrics info type is not read by every parser).
	w.family("shardbench_run_info", gauge, "The run being measured (always 1).")
	w.sample("shardbench_run_info", 1, "version", r.info.Version, "scenario", r.info.Scenario, "backend", r.info.Backend)
	if r.spinSet {
		w.family("shardbench_dispatch_spin_seconds", gauge, "Waits for an intended start shorter than this are spun; 0: the dispatcher sleeps on timers.")
		w.sample("shardbench_dispatch_spin_seconds", r.spin.Seconds())
	}
	if cpu := metrics.ProcessCPU(); cpu > 0 {
		w.family("process_cpu_seconds", counter, "User and system CPU time of the shardbench process.")
		w.sample("process_cpu_seconds_total", cpu.Seconds())
	}

	w.family("shardbench_variant_running", gauge, "1 while the variant is being driven.")
	for _, v := range r.variants {
		w.sample("shardbench_variant_running", b2f(v.running), "variant", v.name)
	}
	w.family("shardbench_target_rate", gauge, "Operations per second the schedule intended over the variant's last interval.")
	r.eachSeen(func(v *variant) { w.sample("shardbench_target_rate", v.targetRate, "variant", v.name) })
	w.family("shardbench_in_flight", gauge, "Operations started and not yet completed at the end of the variant's last interval.")
	r.eachSeen(func(v *variant) { w.sample("shardbench_in_flight", float64(v.inFlight), "variant", v.name) })
	w.family("shardbench_measured_seconds", gauge, "Run time (since the variant's start) at the end of its last closed interval.")
	r.eachSeen(func(v *variant) { w.sample("shardbench_measured_seconds", v.measured.Seconds(), "variant", v.name) })

	counters := []struct {
		name, help string
		get        func(c *metrics.Counters) int64
	}{
		{"shardbench_operations_scheduled", "Operations whose intended start came: completed, dropped or abandoned (the target).", (*metrics.Counters).Scheduled},
		{"shardbench_operations_dropped", "Operations never started: every worker busy with on_full: drop, or an interrupt.", func(c *metrics.Counters) int64 { return c.Dropped }},
		{"shardbench_operations_late", "Operations started more than load.late_after after their intended start.", func(c *metrics.Counters) int64 { return c.Late }},
		{"shardbench_operations_abandoned", "Operations still running at the drain timeout.", func(c *metrics.Counters) int64 { return c.Abandoned }},
		{"shardbench_operations_unserved",
			"Operations offered that the variant's design does not serve: never dispatched, " +
				"counted apart (coverage, not errors).",
			func(c *metrics.Counters) int64 { return c.Unserved }},
	}
	for _, c := range counters {
		w.family(c.name, counter, c.help)
		r.eachOp(func(v *variant, op string, s *opSeries) {
			w.sample(c.name+totalSufx, float64(c.get(&s.Counters)), "variant", v.name, "op", op)
		})
	}
	w.family("shardbench_operations", counter, "Completed operations by outcome: ok, or the error class (the sum is the achieved count).")
	r.eachOp(func(v *variant, op string, s *opSeries) {
		w.sample("shardbench_operations_total", float64(s.OK), "variant", v.name, "op", op, "class", metrics.OK.String())
		for c := 1; c < metrics.NumClasses; c++ {
			w.sample("shardbench_operations_total", float64(s.Errors[c]), "variant", v.name, "op", op, "class", metrics.Class(c).String())
		}
	})

	hists := []struct {
		name, help string
		get        func(s *opSeries) *histogram
	}{
		{"shardbench_response_seconds", "Response time: completion minus intended start (coordinated-omission correct).", func(s *opSeries) *histogram { return &s.response }},
		{"shardbench_service_seconds", "Service time: completion minus actual start.", func(s *opSeries) *histogram { return &s.service }},
		{"shardbench_schedule_lag_seconds", "Schedule lag: actual start minus intended start.", func(s *opSeries) *histogram { return &s.lag }},
	}
	for _, h := range hists {
		w.family(h.name, histKind, h.help)
		r.eachOp(func(v *variant, op string, s *opSeries) {
			hist := h.get(s)
			var cum int64
			for i, b := range Bounds {
				cum += hist.counts[i]
				w.sample(h.name+"_bucket", float64(cum), "variant", v.name, "op", op, "le", formatValue(b))
			}
			w.sample(h.name+"_bucket", float64(hist.count), "variant", v.name, "op", op, "le", "+Inf")
			w.sample(h.name+"_sum", hist.sum, "variant", v.name, "op", op)
			w.sample(h.name+"_count", float64(hist.count), "variant", v.name, "op", op)
		})
	}
	if f == OpenMetrics {
		w.w.WriteString("# EOF\n")
	}
	return w.w.Flush()
}

func (r *Registry) eachSeen(fn func(*variant)) {
	for _, v := range r.variants {
		if v.seen {
			fn(v)
		}
	}
}

func (r *Registry) eachOp(fn func(v *variant, op string, s *opSeries)) {
	for _, v := range r.variants {
		for i, s := range v.ops {
			if s != nil {
				fn(v, r.ops[i], s)
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
