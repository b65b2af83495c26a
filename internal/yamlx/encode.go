package yamlx

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Marshal writes v as YAML using the same field names the decoder reads. Durations are
// written as "30s" (not nanoseconds), Loc fields are skipped and Raw sections are written
// back as they were, so a decoded file re-encodes to an equivalent, readable file: that is
// how a run records "the scenario as run" with every default made explicit.
func Marshal(v any) ([]byte, error) {
	n, err := ToNode(v)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(n)
}

// ToNode converts v to a YAML node.
func ToNode(v any) (*yaml.Node, error) {
	return encode(reflect.ValueOf(v))
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func encode(v reflect.Value) (*yaml.Node, error) {
	if !v.IsValid() {
		return scalar("!!null", "null"), nil
	}
	if v.CanInterface() {
		if m, ok := v.Interface().(yaml.Marshaler); ok && !(v.Kind() == reflect.Pointer && v.IsNil()) {
			out, err := m.MarshalYAML()
			if err != nil {
				return nil, err
			}
			if n, ok := out.(*yaml.Node); ok {
				return n, nil
			}
			return encode(reflect.ValueOf(out))
		}
	}
	switch v.Type() {
	case durationType:
		return scalar("!!str", FormatDuration(time.Duration(v.Int()))), nil
	case timeType:
		return scalar("!!timestamp", v.Interface().(time.Time).Format(time.RFC3339Nano)), nil
	case rawType:
		r := v.Interface().(Raw)
		if r.Node == nil {
			return scalar("!!null", "null"), nil
		}
		return r.Node, nil
	case nodeType:
		n := v.Interface().(yaml.Node)
		return &n, nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return scalar("!!null", "null"), nil
		}
		return encode(v.Elem())
	case reflect.Struct:
		return encodeStruct(v)
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			val, err := encode(v.MapIndex(k))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, scalar("!!str", fmt.Sprint(k.Interface())), val)
		}
		return n, nil
	case reflect.Slice, reflect.Array:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for i := 0; i < v.Len(); i++ {
			item, err := encode(v.Index(i))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, item)
		}
		return n, nil
	case reflect.String:
		return scalar("!!str", v.String()), nil
	case reflect.Bool:
		return scalar("!!bool", strconv.FormatBool(v.Bool())), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return scalar("", strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return scalar("", strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		return scalar("", strconv.FormatFloat(v.Float(), 'g', -1, 64)), nil
	}
	return nil, fmt.Errorf("yamlx: cannot encode %s", v.Type())
}

func encodeStruct(v reflect.Value) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Type == locType {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if strings.Contains(opts, "inline") {
			if fv.Kind() == reflect.Struct {
				inner, err := encodeStruct(fv)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, inner.Content...)
			} else if fv.Kind() == reflect.Map {
				inner, err := encode(fv)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, inner.Content...)
			}
			continue
		}
		if strings.Contains(opts, "omitempty") && isEmpty(fv) {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		val, err := encode(fv)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, scalar("!!str", name), val)
	}
	return n, nil
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Struct:
		if v.Type() == rawType {
			return v.Interface().(Raw).Node == nil
		}
		return v.IsZero()
	}
	return v.IsZero()
}

// FormatDuration writes a duration the way people write them in scenario files:
// "30s", "5m", "1h30m", "250ms", "7d".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String()
	// time.Duration prints 5m0s / 1h0m0s; drop the zero tails.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
