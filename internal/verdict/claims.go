package verdict

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// Claim is one seed claim as checks on a run (claims.yaml).
type Claim struct {
	ID    string `yaml:"id"`
	Seed  string `yaml:"seed"`
	Claim string `yaml:"claim"`
	// Entity is what the claim is about: a variant that does not serve it does not
	// exercise the claim ("" = any variant).
	Entity string `yaml:"entity"`
	// Variants are patterns of the variant names that carry the claim (* and ? match).
	Variants []string `yaml:"variants"`
	// Checks are gate rules (docs/gates.md); MinPeakRate a capacity at the SLO, in
	// operations per second at the peak, the variant must sustain.
	Checks      []string `yaml:"checks"`
	MinPeakRate float64  `yaml:"min_peak_rate"`
}

//go:embed claims.yaml
var claimsYAML []byte

var catalog = sync.OnceValues(func() ([]Claim, error) { return ParseClaims("claims.yaml", claimsYAML) })

// Catalog is the claims of the seed documents the project checks. A broken catalog is a
// build defect: the package's tests parse it.
func Catalog() []Claim {
	c, err := catalog()
	if err != nil {
		panic(err)
	}
	return c
}

// ParseClaims reads a claims file and checks every rule in it.
func ParseClaims(file string, data []byte) ([]Claim, error) {
	var cs []Claim
	if err := yaml.Unmarshal(data, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for i, c := range cs {
		if c.ID == "" || c.Claim == "" || len(c.Variants) == 0 || (len(c.Checks) == 0 && c.MinPeakRate == 0) {
			return nil, fmt.Errorf("%s: claim %d (%q) needs id, claim, variants and checks or min_peak_rate", file, i, c.ID)
		}
		if _, err := c.rules("*"); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// rules are the claim's checks as gate rules for the variants matching pattern.
func (c *Claim) rules(pattern string) (*gate.Rules, error) {
	if len(c.Checks) == 0 {
		return &gate.Rules{}, nil
	}
	doc, err := yaml.Marshal([]map[string]any{{"variant": pattern, "checks": c.Checks}})
	if err != nil {
		return nil, err
	}
	return gate.ParseBytes("claims.yaml ("+c.ID+")", doc)
}

// judgeClaims checks every claim of the catalog the run exercises: some variant carries
// it and serves its entity. A check whose subject the run does not hold (a table the
// variant has not, no projection) does not count; a claim left with no check is not
// listed.
func judgeClaims(in Inputs, cs []Claim) []results.ClaimVerdict {
	run := &gate.Run{Summary: in.Summary, Hotspots: in.Hotspots}
	var out []results.ClaimVerdict
	for i := range cs {
		c := &cs[i]
		cv := results.ClaimVerdict{ID: c.ID, Seed: c.Seed, Claim: c.Claim, Anchor: "claims"}
		for vi := range in.Summary.Variants {
			sv := &in.Summary.Variants[vi]
			if !c.carries(sv.Name) || (c.Entity != "" && !servesEntity(sv, c.Entity)) {
				continue
			}
			cv.Variants = append(cv.Variants, sv.Name)
			cv.Checks = append(cv.Checks, c.judge(run, in.Capacity, in.Run, sv.Name)...)
		}
		if len(cv.Checks) == 0 {
			continue
		}
		cv.Status, cv.Measured = claimStatus(cv.Checks)
		out = append(out, cv)
	}
	return out
}

func (c *Claim) carries(variant string) bool {
	for _, p := range c.Variants {
		if gate.Match(p, variant) {
			return true
		}
	}
	return false
}

// judge runs the claim's checks on one variant.
func (c *Claim) judge(run *gate.Run, capy *results.Capacity, held *RunSLO, variant string) []results.ClaimCheck {
	var out []results.ClaimCheck
	rs, err := c.rules(variant)
	if err == nil && len(rs.Rules) > 0 {
		for _, gc := range gate.Evaluate(rs, run) {
			if gc.ValueText == gate.Absent {
				continue
			}
			check := strings.TrimPrefix(gc.Name, "["+variant+"] ")
			out = append(out, results.ClaimCheck{Variant: variant, Check: check, Status: gc.Status, Value: gc.ValueText, Threshold: gc.ThresholdText, Detail: gc.Detail})
		}
	}
	if c.MinPeakRate > 0 {
		out = append(out, peakRateCheck(capy, held, variant, c.MinPeakRate))
	}
	return out
}

// peakRateCheck judges a capacity claim: the offered peak rate the variant sustains
// within its SLO against the rate claimed. Without a capacity search, the run judged by
// its SLO (held; nil when none) decides it when its own peak does: held at a peak of the
// rate claimed or more, or broke at a peak of that rate or less.
func peakRateCheck(capy *results.Capacity, held *RunSLO, variant string, want float64) results.ClaimCheck {
	ch := results.ClaimCheck{Variant: variant, Check: "peak_rate_at_slo >= " + units.Count(want), Threshold: ">= " + units.Count(want) + " ops/s"}
	cv := capy.Variant(variant)
	if cv == nil && capy == nil && held != nil && held.Unfinished == "" && held.PeakRate > 0 {
		broke := len(held.Failed[variant]) > 0
		peak := units.Count(held.PeakRate) + " ops/s"
		switch {
		case !broke && held.PeakRate >= want:
			ch.Status, ch.Value = results.GatePass, "≥ "+peak
			ch.Detail = "held its SLO (" + held.Source + ") in this run, whose peak is " + peak + "; no capacity search was given"
			return ch
		case broke && held.PeakRate <= want:
			ch.Status, ch.Value = results.GateFail, "< "+peak
			ch.Detail = "broke its SLO (" + held.Source + ") in this run, whose peak is " + peak
			return ch
		}
	}
	if cv == nil {
		ch.Status, ch.Value = results.GateSkip, "not measured"
		ch.Detail = "no capacity search of this variant was given (shardbench capacity)"
		return ch
	}
	ch.Value = units.Count(cv.SustainedPeakRate) + " ops/s"
	if cv.Outcome == results.CapacityAboveRange {
		ch.Value = "≥ " + ch.Value
	}
	ch.Status = results.GateFail
	if cv.SustainedPeakRate >= want {
		ch.Status = results.GatePass
	}
	if cv.BreaksFirst != nil {
		ch.Detail = "breaks first: " + cv.BreaksFirst.Summary
	}
	return ch
}

// claimStatus is refuted when a check failed, untested when one could not be judged,
// confirmed when all passed; measured is the figures in words.
func claimStatus(checks []results.ClaimCheck) (string, string) {
	status := results.ClaimConfirmed
	var parts []string
	for _, ch := range checks {
		switch ch.Status {
		case results.GateFail:
			status = results.ClaimRefuted
		case results.GateSkip:
			if status == results.ClaimConfirmed {
				status = results.ClaimUntested
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %s = %s", ch.Variant, checkSubject(ch.Check), ch.Value))
	}
	return status, strings.Join(parts, "; ")
}

// checkSubject is a check without its comparison: "table:mobile_world.user_sessions
// hottest_share".
func checkSubject(check string) string {
	f := strings.Fields(check)
	if len(f) >= 4 {
		return strings.Join(f[:len(f)-2], " ")
	}
	return check
}
