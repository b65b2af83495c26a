package design

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// Override is a parameter value from outside the design file: a scenario's set or sweep.
type Override struct {
	Name string
	Node *yaml.Node
	Pos  yamlx.Pos // where it was written, for errors
}

// Param is a design parameter with the value a design was loaded with.
type Param struct {
	Name string
	// Value is the value as compact YAML ("100", "{user_id: hashed, created_at: 1}").
	Value string
	// Default reports whether the value is the design's own default.
	Default bool
	node    *yaml.Node
	pos     yamlx.Pos
	origin  string
}

// Load reads a design file, applies its base file and the overrides, and validates it
// completely: every problem is reported with file:line:column and the field path.
func Load(path string, overrides ...Override) (*Design, error) {
	root, params, file, err := loadRoot(path, 0)
	if err != nil {
		return nil, err
	}
	return build(path, file, root, params, overrides)
}

// Parse is Load for text already read from file (a design without a base).
func Parse(file string, data []byte, overrides ...Override) (*Design, error) {
	root, err := yamlx.Parse(file, data)
	if err != nil {
		return nil, err
	}
	var errs yamlx.Errors
	params := readParams(file, root, &errs)
	if mappingValue(root, "base") != nil {
		errs.Add(yamlx.Pos{File: file, Line: root.Line}, "base", "a design with a base must be loaded from a file")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return build(file, file, root, params, overrides)
}

func build(path, file string, root *yaml.Node, params []Param, overrides []Override) (*Design, error) {
	var errs yamlx.Errors
	for _, o := range overrides {
		i := paramIndex(params, o.Name)
		if i < 0 {
			errs.Add(o.Pos, o.Name, "design %s has no parameter %q%s", filepath.Base(path), o.Name, knownParams(params))
			continue
		}
		params[i].node, params[i].pos, params[i].Default = o.Node, o.Pos, false
		params[i].origin = o.Pos.String()
	}
	subs := substitute(file, root, params, &errs)
	f := &File{}
	errs.Append(yamlx.Raw{Node: root, File: file}.Decode(f))
	d := &Design{File: f, Path: path}
	for _, p := range params {
		p.Value = flowYAML(p.node)
		d.Params = append(d.Params, p)
	}
	if len(errs) == 0 || f.Loc.Pos.File != "" {
		errs = append(errs, d.resolve(nil)...)
	}
	annotate(errs, subs)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return d, nil
}

func paramIndex(params []Param, name string) int {
	for i := range params {
		if params[i].Name == name {
			return i
		}
	}
	return -1
}

func knownParams(params []Param) string {
	if len(params) == 0 {
		return " (it declares none)"
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}

const maxBaseDepth = 8

// loadRoot reads a design file's node tree and parameters, resolving a base file: a
// derived file holds only name, description, source, notes, base and set, and replaces
// those of its base; its set changes the base's parameter defaults.
func loadRoot(path string, depth int) (*yaml.Node, []Param, string, error) {
	data, err := yamlx.ReadFile(path)
	if err != nil {
		return nil, nil, "", err
	}
	root, err := yamlx.Parse(path, data)
	if err != nil {
		return nil, nil, "", err
	}
	var errs yamlx.Errors
	if root.Kind != yaml.MappingNode {
		errs.Add(yamlx.Pos{File: path, Line: root.Line, Col: root.Column}, "", "a design file is a mapping")
		return nil, nil, "", errs.Err()
	}
	if err := yamlx.CheckKind(path, root, &File{}); err != nil {
		return nil, nil, "", err
	}
	baseNode := mappingValue(root, "base")
	if baseNode == nil {
		params := readParams(path, root, &errs)
		return root, params, path, errs.Err()
	}
	pos := yamlx.Pos{File: path, Line: baseNode.Line, Col: baseNode.Column}
	if depth >= maxBaseDepth {
		errs.Add(pos, "base", "bases nest more than %d deep (a cycle?)", maxBaseDepth)
		return nil, nil, "", errs.Err()
	}
	allowed := map[string]bool{"name": true, "description": true, "source": true, "notes": true, "base": true, "set": true}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !allowed[k.Value] {
			errs.Add(yamlx.Pos{File: path, Line: k.Line, Col: k.Column}, k.Value, "a design with a base may only set name, description, source, notes and set")
		}
	}
	basePath := filepath.Join(filepath.Dir(path), scalarString(baseNode))
	broot, params, bfile, err := loadRoot(basePath, depth+1)
	if err != nil {
		errs.Add(pos, "base", "%v", err)
		return nil, nil, "", errs.Err()
	}
	// The derived file's own header replaces the base's.
	for _, key := range []string{"name", "description", "source", "notes"} {
		if v := mappingValue(root, key); v != nil {
			setMappingValue(broot, key, v)
		}
	}
	if set := mappingValue(root, "set"); set != nil {
		if set.Kind != yaml.MappingNode {
			errs.Add(yamlx.Pos{File: path, Line: set.Line, Col: set.Column}, "set", "expected a mapping of parameter: value")
		}
		for i := 0; i+1 < len(set.Content); i += 2 {
			k, v := set.Content[i], set.Content[i+1]
			j := paramIndex(params, k.Value)
			kp := yamlx.Pos{File: path, Line: k.Line, Col: k.Column}
			if j < 0 {
				errs.Add(kp, "set."+k.Value, "the base design has no parameter %q%s", k.Value, knownParams(params))
				continue
			}
			params[j].node, params[j].Default = v, false
			params[j].pos = yamlx.Pos{File: path, Line: v.Line, Col: v.Column}
			params[j].origin = params[j].pos.String()
		}
	}
	return broot, params, bfile, errs.Err()
}

func readParams(file string, root *yaml.Node, errs *yamlx.Errors) []Param {
	pn := mappingValue(root, "params")
	if pn == nil {
		return nil
	}
	if pn.Kind != yaml.MappingNode {
		errs.Add(yamlx.Pos{File: file, Line: pn.Line, Col: pn.Column}, "params", "expected a mapping of name: default value")
		return nil
	}
	var out []Param
	for i := 0; i+1 < len(pn.Content); i += 2 {
		k, v := pn.Content[i], pn.Content[i+1]
		if paramIndex(out, k.Value) >= 0 {
			errs.Add(yamlx.Pos{File: file, Line: k.Line, Col: k.Column}, "params."+k.Value, "duplicate parameter")
			continue
		}
		out = append(out, Param{Name: k.Value, node: v, Default: true, pos: yamlx.Pos{File: file, Line: v.Line, Col: v.Column}})
	}
	return out
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func setMappingValue(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// substitution records where a parameter's value was put.
type substitution struct {
	line, col int
	note      string
}

// substitute replaces ${name} in every scalar outside params and set. A scalar that is
// exactly ${name} takes the parameter's value node (any shape); ${name} inside text takes
// its scalar text.
//
// The copies are bounded: a design whose substitutions would take it past
// yamlx.MaxNodes (a large parameter referenced many times) is an error at the reference
// that crosses the limit, as an alias bomb is in one file.
func substitute(file string, root *yaml.Node, params []Param, errs *yamlx.Errors) []substitution {
	var subs []substitution
	budget := yamlx.MaxNodes - yamlx.CountNodes(root, yamlx.MaxNodes)
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if path == "" && (k.Value == "params" || k.Value == "set") {
					continue
				}
				walk(n.Content[i+1], yamlx.JoinPath(path, k.Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			if !strings.Contains(n.Value, "${") {
				return
			}
			pos := yamlx.Pos{File: file, Line: n.Line, Col: n.Column}
			if name, ok := wholeRef(n.Value); ok {
				i := paramIndex(params, name)
				if i < 0 {
					errs.Add(pos, path, "unknown parameter ${%s}%s", name, knownParams(params))
					return
				}
				if budget < 0 {
					return // over the limit: reported once, below
				}
				if budget -= yamlx.CountNodes(params[i].node, yamlx.MaxNodes); budget < 0 {
					errs.Add(pos, path, "substituting ${%s} here takes the design past %d nodes, the limit for one design", name, yamlx.MaxNodes)
					return
				}
				line, col := n.Line, n.Column
				cp := deepCopy(params[i].node, line, col)
				*n = *cp
				subs = append(subs, substitution{line, col, paramNote(&params[i])})
				return
			}
			out, err := expand(n.Value, func(name string) (string, bool) {
				i := paramIndex(params, name)
				if i < 0 {
					return "", false
				}
				subs = append(subs, substitution{n.Line, n.Column, paramNote(&params[i])})
				if params[i].node.Kind != yaml.ScalarNode {
					return "", false
				}
				return params[i].node.Value, true
			})
			if err != nil {
				errs.Add(pos, path, "%v%s", err, knownParams(params))
				return
			}
			n.Value, n.Tag, n.Style = out, "!!str", 0
		}
	}
	walk(root, "")
	return subs
}

// maxFlowNodes bounds a parameter value written as one line of YAML (it names variants
// and is kept in the results): a larger value is shown by its size. Real values (a shard
// key, a bucket count) have a handful of nodes.
const maxFlowNodes = 250

func paramNote(p *Param) string {
	v := flowYAML(p.node)
	if p.Default {
		return fmt.Sprintf("${%s} = %s", p.Name, v)
	}
	return fmt.Sprintf("${%s} = %s, set at %s", p.Name, v, p.origin)
}

func wholeRef(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "${") == 1 {
		return s[2 : len(s)-1], true
	}
	return "", false
}

func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		name := s[i+2 : i+j]
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("unknown or non-scalar parameter ${%s} inside text", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

func deepCopy(n *yaml.Node, line, col int) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	cp := *n
	cp.Line, cp.Column = line, col
	cp.Content = make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		cp.Content[i] = deepCopy(c, line, col)
	}
	return &cp
}

// annotate adds to each error at a substituted value where that value came from.
func annotate(errs yamlx.Errors, subs []substitution) {
	for i := range errs {
		for _, s := range subs {
			if errs[i].Pos.Line == s.line && errs[i].Pos.Col == s.col {
				errs[i].Msg += " (" + s.note + ")"
				break
			}
		}
	}
}

// flowYAML writes a node as one line of YAML.
func flowYAML(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	if yamlx.CountNodes(n, maxFlowNodes) > maxFlowNodes {
		return fmt.Sprintf("(a value of more than %d nodes)", maxFlowNodes)
	}
	cp := deepCopy(n, 0, 0)
	var setFlow func(*yaml.Node)
	setFlow = func(x *yaml.Node) {
		if x.Kind == yaml.MappingNode || x.Kind == yaml.SequenceNode {
			x.Style = yaml.FlowStyle
		}
		x.HeadComment, x.LineComment, x.FootComment = "", "", ""
		for _, c := range x.Content {
			setFlow(c)
		}
	}
	setFlow(cp)
	out, err := yaml.Marshal(cp)
	if err != nil {
		return fmt.Sprint(n.Value)
	}
	return strings.TrimSpace(string(out))
}
