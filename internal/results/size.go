package results

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/units"
)

// What a run writes per second of its schedule, with room to spare: black-friday.yaml's
// 10 minutes of 14 variants and 25 operation types wrote 363 bytes of timeseries.jsonl
// and 1.33 KB of server.json per variant-second, and at most 1.17 KB per second to one
// operation's .hlog (141 MB of logs in all).
const (
	timeseriesPerVariantSecond = 512
	serverPerVariantSecond     = 2048
	hlogPerSecond              = 2048
	hlogMeanPerSecond          = 1024
)

// CheckRunSize refuses a run whose results would be larger than what report, gate,
// compare and merge read (the size limits of package inputfile): a run must stay
// readable. The error gives the estimate, the limit it passes and the longest schedule
// this many variants may have.
func CheckRunSize(variants, ops int, schedule time.Duration) error {
	variants, ops = max(variants, 1), max(ops, 1)
	secs := schedule.Seconds()
	longest := 0.0
	var over string
	for _, f := range []struct {
		name    string
		perSec  float64
		kind    inputfile.Kind
		perFile bool
	}{
		{TimeseriesFile, timeseriesPerVariantSecond * float64(variants), inputfile.Timeseries, false},
		{ServerFile, serverPerVariantSecond * float64(variants), inputfile.Server, false},
		{"each operation's .hlog", hlogPerSecond, inputfile.HistogramLog, true},
	} {
		most := float64(f.kind.Max) / f.perSec
		if longest == 0 || most < longest {
			longest = most
		}
		if est := f.perSec * secs; est > float64(f.kind.Max) && over == "" {
			over = fmt.Sprintf("%s would reach about %s, over the %s limit of %s", f.name, units.Bytes(float64(int64(min(est, 1<<62)))), units.Bytes(float64(f.kind.Max)), f.kind.Name)
		}
	}
	if over == "" {
		return nil
	}
	total := secs * float64(variants) * (timeseriesPerVariantSecond + serverPerVariantSecond + float64(ops)*hlogMeanPerSecond)
	return fmt.Errorf("the results of %d variant(s) over %s would be about %s, and %s that report and gate read: at most %s for this scenario (run fewer variants at a time, or a shorter schedule)",
		variants, fmtSeconds(secs), units.Bytes(float64(int64(min(total, 1<<62)))), over, fmtSeconds(longest))
}

// fmtSeconds writes a schedule length: 45s, 20m, 72.8h.
func fmtSeconds(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.0fs", s)
	case s < 3600:
		return fmt.Sprintf("%.0fm", s/60)
	}
	return strconv.FormatFloat(math.Round(s/360)/10, 'f', -1, 64) + "h"
}
