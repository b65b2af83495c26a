package scenario

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// DefaultClockStart is Black Friday 2025 at midnight in Moscow, the store's home zone.
var DefaultClockStart = time.Date(2025, 11, 28, 0, 0, 0, 0, time.FixedZone("MSK", 3*3600))

// ReadFile reads, decodes, defaults and validates a scenario file. The error lists every
// problem found, each with file:line:column and field.
func ReadFile(path string) (*Scenario, error) {
	data, err := yamlx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes, defaults and validates scenario text read from file.
func Parse(file string, data []byte) (*Scenario, error) {
	s := &Scenario{}
	var errs yamlx.Errors
	errs.Append(yamlx.Unmarshal(file, data, s))
	s.File = file
	if len(errs) > 0 && s.Loc.Pos.File == "" {
		// Nothing decoded (syntax error): defaults and validation would only add noise.
		return nil, errs.Err()
	}
	s.ApplyDefaults()
	errs = append(errs, s.Validate()...)
	if err := errs.Err(); err != nil {
		return s, err
	}
	return s, nil
}

// ApplyDefaults fills every unset field, so that the scenario written next to results
// states every setting the run used.
func (s *Scenario) ApplyDefaults() {
	if s.Name == "" && s.File != "" {
		s.Name = strings.TrimSuffix(filepath.Base(s.File), filepath.Ext(s.File))
	}
	if !s.Loc.Has("seed") {
		s.Seed = 1
	}
	if s.Clock.Start.IsZero() {
		s.Clock.Start = DefaultClockStart
	}
	if !s.Clock.Loc.Has("scale") {
		s.Clock.Scale = 1
	}
	l := &s.Load
	if l.Arrival == "" {
		l.Arrival = ArrivalPoisson
	}
	if !l.Loc.Has("max_in_flight") {
		l.MaxInFlight = 1024
	}
	if l.OnFull == "" {
		l.OnFull = OnFullQueue
	}
	if !l.Loc.Has("late_after") {
		l.LateAfter = time.Millisecond
	}
	if !l.Loc.Has("timeout") {
		l.Timeout = 5 * time.Second
	}
	if !l.Loc.Has("drain_timeout") {
		l.DrainTimeout = 10 * time.Second
	}
	for i := range l.Phases {
		p := &l.Phases[i]
		if p.Name == "" {
			p.Name = fmt.Sprintf("%s-%d", p.Type, i+1)
		}
	}
	p := &s.Population
	setDefault(p.Loc, "users", &p.Users, 1_000_000)
	setDefault(p.Loc, "sessions", &p.Sessions, 1_000_000)
	setDefault(p.Loc, "carts", &p.Carts, 200_000)
	setDefault(p.Loc, "products", &p.Products, 100_000)
	if !p.Loc.Has("guest_share") {
		p.GuestShare = 0.3
	}
	if !p.Loc.Has("orders_per_user") {
		p.OrdersPerUser = 5
	}
	defaultSkew(&p.UserActivity, 1.0)
	defaultSkew(&p.ProductPopularity, 1.0)
	if len(p.Categories) == 0 {
		p.Categories = Weights{
			{Name: "electronics", Weight: 70}, {Name: "appliances", Weight: 10},
			{Name: "accessories", Weight: 8}, {Name: "clothing", Weight: 5},
			{Name: "home", Weight: 4}, {Name: "books", Weight: 3},
		}
	}
	if len(p.GeoZones) == 0 {
		p.GeoZones = Weights{
			{Name: "moscow", Weight: 45}, {Name: "spb", Weight: 22},
			{Name: "ekaterinburg", Weight: 13}, {Name: "novosibirsk", Weight: 12},
			{Name: "kaliningrad", Weight: 8},
		}
	}
}

func setDefault(loc yamlx.Loc, field string, v *int64, d int64) {
	if !loc.Has(field) {
		*v = d
	}
}

func defaultSkew(k *Skew, s float64) {
	if k.Distribution == "" {
		k.Distribution = "zipf"
		if k.S == 0 {
			k.S = s
		}
	}
}

// Validate checks values and cross-field rules, returning every problem.
func (s *Scenario) Validate() yamlx.Errors {
	var errs yamlx.Errors
	if strings.TrimSpace(s.Name) == "" {
		errs.AddAt(s.Loc, "name", "must not be empty")
	}
	if s.Clock.Scale <= 0 || s.Clock.Scale > 1e6 {
		errs.AddAt(s.Clock.Loc, "scale", "must be in (0, 1e6], got %g", s.Clock.Scale)
	}
	s.validateLoad(&errs)
	s.validatePopulation(&errs)
	if len(s.Mix) == 0 {
		errs.AddAt(s.Loc, "mix", "must list at least one operation with a weight")
	} else if s.Mix.Total() <= 0 {
		errs.AddAt(s.Loc, "mix", "weights must add up to more than zero")
	}
	for i, v := range s.Designs {
		if strings.TrimSpace(v.Design) == "" {
			errs.AddAt(v.Loc, "design", "must name a design file")
		}
		for k, vals := range v.Sweep {
			if len(vals) == 0 {
				errs.AddAt(v.Loc, "sweep", "parameter %q needs at least one value", k)
			}
		}
		_ = i
	}
	s.validateEvents(&errs)
	return errs
}

func (s *Scenario) validateLoad(errs *yamlx.Errors) {
	l := &s.Load
	switch l.Arrival {
	case ArrivalUniform, ArrivalPoisson:
	default:
		errs.AddAt(l.Loc, "arrival", "must be %q or %q, got %q", ArrivalUniform, ArrivalPoisson, l.Arrival)
	}
	if l.MaxInFlight < 1 || l.MaxInFlight > 1_000_000 {
		errs.AddAt(l.Loc, "max_in_flight", "must be between 1 and 1000000, got %d", l.MaxInFlight)
	}
	switch l.OnFull {
	case OnFullQueue, OnFullDrop:
	default:
		errs.AddAt(l.Loc, "on_full", "must be %q or %q, got %q", OnFullQueue, OnFullDrop, l.OnFull)
	}
	if l.LateAfter < 0 {
		errs.AddAt(l.Loc, "late_after", "must not be negative")
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"timeout", l.Timeout}, {"drain_timeout", l.DrainTimeout}} {
		if f.d <= 0 {
			errs.AddAt(l.Loc, f.name, "must be positive")
		}
	}
	if len(l.Phases) == 0 {
		errs.AddAt(l.Loc, "phases", "must list at least one phase")
	}
	if d := s.Duration(); d > MaxDuration {
		errs.AddAt(l.Loc, "phases", "the schedule lasts %s, over the %s one run may last", yamlx.FormatDuration(d), yamlx.FormatDuration(MaxDuration))
	}
	names := map[string]bool{}
	for i := range l.Phases {
		p := &l.Phases[i]
		if names[p.Name] {
			errs.AddAt(p.Loc, "name", "phase name %q is used twice", p.Name)
		}
		names[p.Name] = true
		p.validate(errs)
	}
}

// MaxRate is the highest rate a phase may ask for, in operations per second: a hundred
// times Black Friday's peak (100K ops/s), four times what the engine schedules in real
// time (about 2.5 M ops/s); it catches a stray extra zero. The simulator, which runs any
// rate given the time, holds the operations in flight in memory (sim.CheckMemory).
const MaxRate = 10e6

// MaxDuration is the longest schedule one run may have: a week, longer than any sale or
// soak test (Black Friday's schedule is 10 minutes; clock.scale replays a day in less).
const MaxDuration = 7 * 24 * time.Hour

func checkRate(errs *yamlx.Errors, loc yamlx.Loc, field string, r Rate, required bool) {
	switch {
	case required && !loc.Has(field):
		errs.AddAt(loc, field, "is required")
	case r < 0:
		errs.AddAt(loc, field, "must not be negative, got %g", float64(r))
	case r > MaxRate:
		errs.AddAt(loc, field, "%g ops/s is beyond what one run can schedule (max %g)", float64(r), MaxRate)
	}
}

func (p *Phase) validate(errs *yamlx.Errors) {
	if p.Duration <= 0 {
		if p.Loc.Has("duration") {
			errs.AddAt(p.Loc, "duration", "must be positive")
		} else {
			errs.AddAt(p.Loc, "duration", "is required")
		}
	}
	allowed := map[string]bool{"name": true, "type": true, "duration": true}
	switch p.Type {
	case PhaseConstant:
		checkRate(errs, p.Loc, "rate", p.Rate, true)
		allowed["rate"] = true
	case PhaseRamp:
		checkRate(errs, p.Loc, "from", p.From, true)
		checkRate(errs, p.Loc, "to", p.To, true)
		allowed["from"], allowed["to"] = true, true
	case PhaseStep:
		checkRate(errs, p.Loc, "from", p.From, true)
		checkRate(errs, p.Loc, "to", p.To, true)
		if p.Steps < 2 {
			errs.AddAt(p.Loc, "steps", "must be at least 2 (the first stair is at from, the last at to)")
		}
		allowed["from"], allowed["to"], allowed["steps"] = true, true, true
	case PhaseSpike:
		checkRate(errs, p.Loc, "rate", p.Rate, true)
		checkRate(errs, p.Loc, "peak", p.Peak, true)
		if p.SpikeFor <= 0 {
			errs.AddAt(p.Loc, "spike_for", "must be positive")
		}
		if p.SpikeAt < 0 {
			errs.AddAt(p.Loc, "spike_at", "must not be negative")
		}
		if p.Duration > 0 && p.SpikeAt+p.SpikeFor > p.Duration {
			errs.AddAt(p.Loc, "spike_for", "spike (%s at %s) ends after the phase (%s)",
				yamlx.FormatDuration(p.SpikeFor), yamlx.FormatDuration(p.SpikeAt), yamlx.FormatDuration(p.Duration))
		}
		allowed["rate"], allowed["peak"], allowed["spike_at"], allowed["spike_for"] = true, true, true, true
	case "":
		errs.AddAt(p.Loc, "type", "is required (constant, ramp, step or spike)")
		return
	default:
		errs.AddAt(p.Loc, "type", "must be constant, ramp, step or spike, got %q", p.Type)
		return
	}
	for _, f := range []string{"rate", "from", "to", "steps", "peak", "spike_at", "spike_for"} {
		if p.Loc.Has(f) && !allowed[f] {
			errs.AddAt(p.Loc, f, "does not apply to a %s phase", p.Type)
		}
	}
}

func (s *Scenario) validatePopulation(errs *yamlx.Errors) {
	p := &s.Population
	for _, f := range []struct {
		name string
		v    int64
	}{{"users", p.Users}, {"sessions", p.Sessions}, {"carts", p.Carts}, {"products", p.Products}} {
		if f.v < 1 || f.v > 1e12 {
			errs.AddAt(p.Loc, f.name, "must be between 1 and 1e12, got %d", f.v)
		}
	}
	if p.GuestShare < 0 || p.GuestShare > 1 {
		errs.AddAt(p.Loc, "guest_share", "must be between 0 and 1, got %g", p.GuestShare)
	}
	if p.OrdersPerUser < 0 || p.OrdersPerUser > 1e6 {
		errs.AddAt(p.Loc, "orders_per_user", "must be between 0 and 1e6, got %g", p.OrdersPerUser)
	}
	for _, k := range []*Skew{&p.UserActivity, &p.ProductPopularity} {
		switch k.Distribution {
		case "uniform":
			if k.Loc.Has("s") {
				errs.AddAt(k.Loc, "s", "does not apply to a uniform distribution")
			}
		case "zipf":
			if k.S <= 0 || k.S > 10 || math.IsNaN(k.S) {
				errs.AddAt(k.Loc, "s", "Zipf exponent must be in (0, 10], got %g", k.S)
			}
		default:
			errs.AddAt(k.Loc, "distribution", "must be zipf or uniform, got %q", k.Distribution)
		}
	}
	if p.Bots.Count < 0 {
		errs.AddAt(p.Bots.Loc, "count", "must not be negative")
	}
	if p.Bots.Share < 0 || p.Bots.Share >= 1 {
		errs.AddAt(p.Bots.Loc, "share", "must be in [0, 1), got %g", p.Bots.Share)
	}
	if p.Bots.Share > 0 && p.Bots.Count == 0 {
		errs.AddAt(p.Bots.Loc, "count", "must be at least 1 when share is set")
	}
	if int64(p.Bots.Count) > p.Users && p.Users >= 1 {
		errs.AddAt(p.Bots.Loc, "count", "cannot exceed population.users (%d)", p.Users)
	}
	for _, w := range []struct {
		name string
		v    Weights
	}{{"categories", p.Categories}, {"geo_zones", p.GeoZones}} {
		if w.v.Total() <= 0 {
			errs.AddAt(p.Loc, w.name, "weights must add up to more than zero")
		}
		if len(w.v) > 250 {
			errs.AddAt(p.Loc, w.name, "at most 250 entries, got %d", len(w.v))
		}
	}
	h := p.HotProducts
	if h.Count < 0 || int64(h.Count) > p.Products && p.Products >= 1 {
		errs.AddAt(h.Loc, "count", "must be between 0 and population.products")
	}
	if h.Share < 0 || h.Share >= 1 {
		errs.AddAt(h.Loc, "share", "must be in [0, 1), got %g", h.Share)
	}
	if h.ShiftEvery < 0 {
		errs.AddAt(h.Loc, "shift_every", "must not be negative")
	}
}

func (s *Scenario) validateEvents(errs *yamlx.Errors) {
	total := s.Duration()
	for _, e := range s.Events {
		if e.At < 0 || (total > 0 && e.At > total) {
			errs.AddAt(e.Loc, "at", "must be within the run (0 to %s), got %s", yamlx.FormatDuration(total), yamlx.FormatDuration(e.At))
		}
		switch e.Action {
		case EventNodeDown, EventNodeUp:
			if e.Node == "" {
				errs.AddAt(e.Loc, "node", "is required for %s", e.Action)
			}
		case EventAddNode:
		case EventAddShard:
		case EventExec:
			if len(e.Command) == 0 {
				errs.AddAt(e.Loc, "command", "is required for exec")
			}
		case "":
			errs.AddAt(e.Loc, "action", "is required")
		default:
			errs.AddAt(e.Loc, "action", "must be one of node_down, node_up, add_node, add_shard, exec; got %q", e.Action)
		}
	}
}

// Overrides are command-line changes applied on top of the file.
type Overrides struct {
	Seed *int64
	// Duration scales all phases (and events) so the schedule lasts this long; RateScale
	// multiplies every rate. Each applies when non-zero, or when its Set field says the
	// user gave it (then zero is refused rather than ignored).
	Duration     time.Duration
	DurationSet  bool
	RateScale    float64
	RateScaleSet bool
}

// Apply changes the scenario in place; the scenario written with the results shows them.
// An override that would take the scenario past its ceilings (MaxRate, MaxDuration) is
// refused with the largest value this scenario allows.
func (s *Scenario) Apply(o Overrides) error {
	if o.Seed != nil {
		s.Seed = *o.Seed
	}
	if o.RateScale != 0 || o.RateScaleSet {
		if err := s.scaleRates(o.RateScale); err != nil {
			return err
		}
	}
	if o.Duration != 0 || o.DurationSet {
		if err := s.scaleDuration(o.Duration); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scenario) scaleRates(k float64) error {
	if !(k > 0) || math.IsInf(k, 0) {
		return fmt.Errorf("--rate-scale must be a positive number, got %g", k)
	}
	var peak Rate
	for _, p := range s.Load.Phases {
		peak = max(peak, p.Rate, p.From, p.To, p.Peak)
	}
	if float64(peak)*k > MaxRate {
		return fmt.Errorf("--rate-scale %g would schedule %g ops/s at the scenario's peak of %g, over the %g ops/s one run can schedule: at most --rate-scale %g",
			k, float64(peak)*k, float64(peak), MaxRate, MaxRate/float64(peak))
	}
	for i := range s.Load.Phases {
		p := &s.Load.Phases[i]
		r := Rate(k)
		p.Rate, p.From, p.To, p.Peak = p.Rate*r, p.From*r, p.To*r, p.Peak*r
	}
	return nil
}

func (s *Scenario) scaleDuration(d time.Duration) error {
	switch {
	case d <= 0:
		return fmt.Errorf("--duration must be positive, got %s", d)
	case d > MaxDuration:
		return fmt.Errorf("--duration %s is over the %s one run may last", yamlx.FormatDuration(d), yamlx.FormatDuration(MaxDuration))
	}
	total := s.Duration()
	if total <= 0 {
		return nil
	}
	f := float64(d) / float64(total)
	scale := func(x time.Duration) time.Duration { return time.Duration(math.Round(float64(x) * f)) }
	var sum time.Duration
	for i := range s.Load.Phases {
		p := &s.Load.Phases[i]
		p.Duration, p.SpikeAt, p.SpikeFor = scale(p.Duration), scale(p.SpikeAt), scale(p.SpikeFor)
		if p.Duration <= 0 {
			p.Duration = time.Millisecond
		}
		if p.Type == PhaseSpike && p.SpikeFor <= 0 {
			p.SpikeFor = 1
		}
		sum += p.Duration
	}
	// Rounding must not change the total the user asked for: the longest phase takes the
	// difference.
	longest := &s.Load.Phases[0]
	for i := range s.Load.Phases {
		if s.Load.Phases[i].Duration > longest.Duration {
			longest = &s.Load.Phases[i]
		}
	}
	longest.Duration += d - sum
	if longest.Duration <= 0 || longest.Type == PhaseSpike && longest.SpikeFor > longest.Duration {
		return fmt.Errorf("--duration %s is too short for the scenario's %d phases", d, len(s.Load.Phases))
	}
	if longest.SpikeAt+longest.SpikeFor > longest.Duration {
		longest.SpikeAt = longest.Duration - longest.SpikeFor
	}
	for i := range s.Events {
		s.Events[i].At = min(scale(s.Events[i].At), d)
	}
	return nil
}

// AsRun returns the scenario as YAML with every default explicit.
func (s *Scenario) AsRun() ([]byte, error) {
	return yamlx.Marshal(s)
}

// Dir is the directory relative paths in the scenario are resolved from.
func (s *Scenario) Dir() string {
	if s.BaseDir != "" {
		return s.BaseDir
	}
	return filepath.Dir(s.File)
}
