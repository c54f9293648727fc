package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hadrill/hadrill/internal/hderr"
)

// Parse decodes YAML strictly: unknown fields and wrong types are reported
// with their field paths, every problem at once. It does not apply defaults
// or validate semantics (see Load).
func Parse(data []byte) (*Spec, error) {
	s, problems, err := parse(data)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, hderr.Users(problems)
	}
	return s, nil
}

// Load parses, applies defaults and validates a spec, reporting structural
// and semantic problems together (a field with a structural problem is not
// judged again).
func Load(data []byte) (*Spec, error) {
	s, problems, err := parse(data)
	if err != nil {
		return nil, err
	}
	Defaults(s)
	bad := map[string]bool{}
	for _, p := range problems {
		bad[strings.SplitN(p, ": ", 2)[0]] = true
	}
	if verr := Validate(s); verr != nil {
		for _, p := range verr.(*hderr.UserError).Problems {
			if !bad[strings.SplitN(p, ": ", 2)[0]] {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		return nil, hderr.Users(problems)
	}
	return s, nil
}

// parse returns the spec decoded as far as possible and the structural
// problems; err only when there is no document to speak of.
func parse(data []byte) (*Spec, []string, error) {
	var s Spec
	problems, err := decode(data, &s, "spec", "a mapping with at least 'clusters'")
	if err != nil {
		return nil, nil, err
	}
	return &s, problems, nil
}

// Strict decodes one YAML document into out (a pointer to a struct) as a
// spec is decoded: unknown fields, fields given twice and wrong types are
// reported with their paths, every problem at once. root names the
// document in messages ("inventory").
func Strict(data []byte, out any, root string) error {
	problems, err := decode(data, out, root, "a mapping")
	if err != nil {
		return err
	}
	return hderr.Users(problems)
}

// decode fills out as far as the document allows and returns the
// structural problems; err only when there is no document to speak of.
func decode(data []byte, out any, root, expected string) ([]string, error) {
	var doc0 yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, hderr.User("%s: empty document (expected %s)", root, expected)
		}
		return nil, hderr.User("%s: malformed YAML: %s", root, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, hderr.User("%s: more than one YAML document (expected exactly one)", root)
	}
	doc := &doc0
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	var problems []string
	budget := maxNodes
	check(doc, reflect.TypeOf(out).Elem(), root, "", &problems, &budget)
	if budget < 0 {
		return nil, hderr.User("%s: document too large or too deeply aliased (more than %d nodes)", root, maxNodes)
	}
	if doc.Kind != yaml.MappingNode {
		return nil, hderr.User("%s: expected %s, got %s", root, expected, describe(doc))
	}
	dropRepeats(doc)
	_ = doc.Decode(out) // type errors are in problems already; the rest decodes
	return problems, nil
}

// dropRepeats removes every key given again in a mapping (a problem
// already), so that the rest of the document decodes: the decoder refuses
// a whole document with a repeated key, and the problems that would follow
// (a required field missing) would be false.
func dropRepeats(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind != yaml.ScalarNode || !seen[k.Value] {
				seen[k.Value] = true
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
		}
		n.Content = kept
	}
	for _, c := range n.Content {
		dropRepeats(c)
	}
}

// maxNodes bounds the walk so aliases cannot expand a small document
// into an exponential one.
const maxNodes = 100000

// check walks a YAML node against the Go type it will decode into.
func check(n *yaml.Node, t reflect.Type, root, path string, problems *[]string, budget *int) {
	if *budget--; *budget < 0 {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	at := func(msg string, args ...any) {
		p := path
		if p == "" {
			p = root
		}
		*problems = append(*problems, fmt.Sprintf("%s: %s (line %d)", p, fmt.Sprintf(msg, args...), n.Line))
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // null leaves the zero value; validation decides whether that is allowed
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			at("expected a mapping, got %s", describe(n))
			return
		}
		fields := structFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			name := k.Value
			f, ok := fields[name]
			if !ok {
				*problems = append(*problems, fmt.Sprintf("%s: unknown field (expected one of: %s) (line %d)",
					join(path, name), strings.Join(sortedKeys(fields), ", "), k.Line))
				continue
			}
			if seen[name] {
				*problems = append(*problems, fmt.Sprintf("%s: given twice (line %d)", join(path, name), k.Line))
			}
			seen[name] = true
			check(v, f, root, join(path, name), problems, budget)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			at("expected a list, got %s", describe(n))
			return
		}
		for i, item := range n.Content {
			check(item, t.Elem(), root, fmt.Sprintf("%s[%d]", path, i), problems, budget)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			at("expected a mapping, got %s", describe(n))
			return
		}
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if line, ok := first[k.Value]; ok { // a map keeps one of them: the other would vanish without a word
				*problems = append(*problems, fmt.Sprintf("%s: given twice (lines %d and %d)", join(path, k.Value), line, k.Line))
				continue
			}
			first[k.Value] = k.Line
			check(n.Content[i+1], t.Elem(), root, join(path, k.Value), problems, budget)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			at("expected %s, got %s", kindName(t), describe(n))
			return
		}
		v := reflect.New(t)
		integer := t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64
		if err := n.Decode(v.Interface()); err != nil || integer && n.Tag == "!!float" { // the decoder would cut 2.5 to 2
			at("expected %s, got %q", kindName(t), n.Value)
		}
	}
}

func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return t.String()
}

// Fields is the spec as its file names it (the YAML keys, a field left at
// its zero value left out), for printing as JSON: the Go names the spec
// is stored under (a lab's plan) are not the ones a user writes.
func Fields(s *Spec) (map[string]any, error) {
	b, err := yaml.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
