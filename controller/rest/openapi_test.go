package rest_test

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/protocol/api"
)

const openAPIFile = "../../docs/openapi.yaml"

type openAPIDoc struct {
	OpenAPI    string                    `yaml:"openapi"`
	Paths      map[string]map[string]any `yaml:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]any `yaml:"properties"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

func loadOpenAPI(t *testing.T) (*openAPIDoc, string) {
	t.Helper()
	b, err := os.ReadFile(openAPIFile)
	must(t, err)
	var doc openAPIDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") {
		t.Fatalf("%s: openapi %q, want 3.0.x", openAPIFile, doc.OpenAPI)
	}
	return &doc, string(b)
}

// TestOpenAPIMatchesRoutes checks that docs/openapi.yaml documents exactly
// the routes the handler serves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	var documented, served []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	for _, rt := range rest.Routes() {
		served = append(served, rt.Method+" "+rt.Pattern)
	}
	sort.Strings(documented)
	sort.Strings(served)
	if !reflect.DeepEqual(documented, served) {
		t.Fatalf("%s and rest.Routes differ:\ndocumented: %s\nserved:     %s", openAPIFile,
			strings.Join(documented, "\n            "), strings.Join(served, "\n            "))
	}
}

// TestOpenAPISchemasMatchTypes checks that each schema has exactly the JSON
// fields of the Go type it describes, and that every $ref resolves.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	doc, text := loadOpenAPI(t)
	types := map[string]any{
		"Error":           api.Error{},
		"Health":          api.Health{},
		"ScopeProperty":   api.ScopeProperty{},
		"ScopeList":       api.ScopeList{},
		"ScalingPolicy":   api.ScalingPolicy{},
		"RetentionPolicy": api.RetentionPolicy{},
		"TieringPolicy":   api.TieringPolicy{},
		"StreamConfig":    api.StreamConfig{},
		"StreamInfo":      api.StreamInfo{},
		"StreamList":      api.StreamList{},
		"StreamState":     api.StreamState{},
		"KeyRange":        api.KeyRange{},
		"ScaleRequest":    api.ScaleRequest{},
		"SegmentRange":    api.SegmentRange{},
		"SegmentList":     api.SegmentList{},
		"EpochInfo":       api.EpochInfo{},
		"EpochList":       api.EpochList{},
		"Successor":       api.Successor{},
		"SuccessorList":   api.SuccessorList{},
		"SegmentURI":      api.SegmentURI{},
		"Tier2":           rest.Tier2{},
		"StreamTier":      api.StreamTier{},
		"SegmentTier":     api.SegmentTier{},
		"NodeTierList":    api.NodeTierList{},
		"NodeList":        api.NodeList{},
		"NodeStatus":      api.NodeStatus{},
		"DrainRequest":    api.DrainRequest{},
		"NodeTier":        api.NodeTier{},
		"ContainerTier":   api.ContainerTier{},
		"StreamCut":       api.StreamCut{},
		"CutRange":        api.CutRange{},
		"TxnRequest":      api.TxnRequest{},
		"TxnInfo":         api.TxnInfo{},

		"ReaderGroupConfig": api.ReaderGroupConfig{},
		"ReaderGroup":       api.ReaderGroup{},
		"ReaderGroupState":  api.ReaderGroupState{},
		"ReaderGroupList":   api.ReaderGroupList{},
	}
	for name, schema := range doc.Components.Schemas {
		v, ok := types[name]
		if !ok {
			t.Errorf("schema %s: no Go type known to this test", name)
			continue
		}
		var got []string
		for p := range schema.Properties {
			got = append(got, p)
		}
		want := jsonFields(reflect.TypeOf(v))
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("schema %s has properties %v, its Go type %T has JSON fields %v", name, got, v, want)
		}
	}
	for name := range types {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("no schema %s", name)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		_, ref, ok := strings.Cut(line, `$ref: "#/components/`)
		if !ok {
			continue
		}
		ref, _, _ = strings.Cut(ref, `"`)
		kind, name, _ := strings.Cut(ref, "/")
		if kind == "schemas" {
			if _, ok := doc.Components.Schemas[name]; !ok {
				t.Errorf("$ref to a missing schema %s", name)
			}
		} else if !strings.Contains(text, "\n  "+kind+":\n") || !strings.Contains(text, "\n    "+name+":\n") {
			t.Errorf("$ref to a missing %s %s", kind, name)
		}
	}
}

// jsonFields returns the JSON names of a struct's fields, embedded structs
// flattened; nil for a non-struct.
func jsonFields(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}
