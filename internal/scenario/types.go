package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// Rate is operations per second. Files may write 50000, 50k, 1.5M or "100/s".
type Rate float64

// ParseRate parses a rate as written in scenario files.
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "rps")
	t = strings.ReplaceAll(strings.TrimSpace(t), "_", "")
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid rate %q (use e.g. 50000, 50k, 1.5M)", s)
	}
	return Rate(f * mult), nil
}

// UnmarshalYAMLX implements yamlx.Unmarshaler.
func (r *Rate) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" {
		d.Errorf(n, path, "expected a rate such as 50000 or 50k")
		return
	}
	v, err := ParseRate(n.Value)
	if err != nil {
		d.Errorf(n, path, "%v", err)
		return
	}
	*r = v
}

// MarshalYAML writes the rate as a plain number.
func (r Rate) MarshalYAML() (any, error) { return float64(r), nil }

// Weight is one named weight.
type Weight struct {
	Name   string
	Weight float64
	Pos    yamlx.Pos
}

// Weights is an ordered set of named weights, written as a mapping. Order follows the file
// so that anything derived from it (alias tables, category ids) is deterministic.
type Weights []Weight

// UnmarshalYAMLX implements yamlx.Unmarshaler.
func (w *Weights) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "expected a mapping of name: weight")
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, path, "names must be plain strings")
			continue
		}
		p := yamlx.JoinPath(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.Errorf(k, p, "duplicate key (first at line %d)", line)
			continue
		}
		seen[k.Value] = k.Line
		var f float64
		d.Decode(v, p, &f)
		if f < 0 {
			d.Errorf(v, p, "weight must not be negative")
		}
		*w = append(*w, Weight{Name: k.Value, Weight: f, Pos: d.PosOf(v)})
	}
}

// MarshalYAML writes the weights as an ordered mapping.
func (w Weights) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, x := range w {
		n.Content = append(n.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x.Name},
			&yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(x.Weight, 'g', -1, 64)})
	}
	return n, nil
}

// Total is the sum of the weights.
func (w Weights) Total() float64 {
	t := 0.0
	for _, x := range w {
		t += x.Weight
	}
	return t
}

// Get returns the weight of name and whether it is present.
func (w Weights) Get(name string) (float64, bool) {
	for _, x := range w {
		if x.Name == name {
			return x.Weight, true
		}
	}
	return 0, false
}

// Names lists the names in order.
func (w Weights) Names() []string {
	out := make([]string, len(w))
	for i, x := range w {
		out[i] = x.Name
	}
	return out
}

// Shares returns the weights normalised to sum to 1 (nil when the total is 0).
func (w Weights) Shares() []float64 {
	t := w.Total()
	if t <= 0 {
		return nil
	}
	out := make([]float64, len(w))
	for i, x := range w {
		out[i] = x.Weight / t
	}
	return out
}
