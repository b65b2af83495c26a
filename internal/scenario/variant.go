package scenario

import (
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// Param is one design parameter override as written in the file: its value node keeps
// the order of nested mappings (a shard key's fields) and its position for errors.
type Param struct {
	Name string
	Pos  yamlx.Pos // position of the value
	Node *yaml.Node
}

// SweepParam is one swept parameter with its values in file order.
type SweepParam struct {
	Name   string
	Pos    yamlx.Pos // position of the list
	Values []*yaml.Node
}

// variantSpecFields decodes VariantSpec's fields without recursing into UnmarshalYAMLX.
type variantSpecFields VariantSpec

// UnmarshalYAMLX decodes a variant spec and keeps the set and sweep value nodes in file
// order (SetParams, SweepParams), so a design can receive values of any shape with their
// positions.
func (v *VariantSpec) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	d.Decode(n, path, (*variantSpecFields)(v))
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		for val.Kind == yaml.AliasNode && val.Alias != nil {
			val = val.Alias
		}
		if val.Kind != yaml.MappingNode {
			continue
		}
		switch k.Value {
		case "set":
			for j := 0; j+1 < len(val.Content); j += 2 {
				pk, pv := val.Content[j], val.Content[j+1]
				v.SetParams = append(v.SetParams, Param{Name: pk.Value, Pos: d.PosOf(pv), Node: pv})
			}
		case "sweep":
			for j := 0; j+1 < len(val.Content); j += 2 {
				pk, pv := val.Content[j], val.Content[j+1]
				sp := SweepParam{Name: pk.Value, Pos: d.PosOf(pv)}
				if pv.Kind == yaml.SequenceNode {
					sp.Values = append(sp.Values, pv.Content...)
				}
				v.SweepParams = append(v.SweepParams, sp)
			}
		}
	}
}
