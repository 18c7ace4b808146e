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
		"PendingScale":    api.PendingScale{},
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
		"WriterTime":      api.WriterTime{},
		"Watermark":       api.Watermark{},
		"WatermarkList":   api.WatermarkList{},

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

// TestOpenAPIRangesMatchCode checks that docs/openapi.yaml states, for
// every number of a request body, exactly the range api.Ranges checks,
// and states no range that the code does not check.
func TestOpenAPIRangesMatchCode(t *testing.T) {
	b, err := os.ReadFile(openAPIFile)
	must(t, err)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties           map[string]map[string]any `yaml:"properties"`
				AdditionalProperties map[string]any            `yaml:"additionalProperties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	must(t, yaml.Unmarshal(b, &doc))
	// bound returns m[key] as an int64, or false if absent.
	bound := func(where string, m map[string]any, key string) (int64, bool) {
		v, ok := m[key]
		if !ok {
			return 0, false
		}
		switch n := v.(type) {
		case int:
			return int64(n), true
		case uint64:
			t.Fatalf("%s: %s %d overflows int64", where, key, n)
		}
		t.Fatalf("%s: %s is %T %v, want an integer", where, key, v, v)
		return 0, false
	}
	// stated: where -> [min, max] as the document states them.
	stated := map[string][2]int64{}
	// Numbers only in replies may state a bound the code need not check.
	replyOnly := map[string]bool{"SegmentURI.container": true}
	note := func(where string, m map[string]any, minKey, maxKey string) {
		if replyOnly[where] {
			return
		}
		lo, okLo := bound(where, m, minKey)
		hi, okHi := bound(where, m, maxKey)
		switch {
		case okLo && okHi:
			stated[where] = [2]int64{lo, hi}
		case okLo || okHi:
			t.Errorf("%s: states only one of %s and %s", where, minKey, maxKey)
		}
	}
	for name, schema := range doc.Components.Schemas {
		for prop, p := range schema.Properties {
			note(name+"."+prop, p, "minimum", "maximum")
			note(name+"."+prop+"#count", p, "minItems", "maxItems")
			if items, ok := p["items"].(map[string]any); ok {
				note(name+"."+prop+"[]", items, "minimum", "maximum")
			}
		}
		if schema.AdditionalProperties != nil {
			note(name+".*", schema.AdditionalProperties, "minimum", "maximum")
		}
	}
	checked := map[string][2]int64{}
	for _, r := range api.Ranges() {
		where := r.Schema + "." + r.Field
		switch r.Of {
		case api.OfItems:
			where += "[]"
		case api.OfCount:
			where += "#count"
		case api.OfMapValues:
			where = r.Schema + ".*"
		}
		checked[where] = [2]int64{r.Min, r.Max}
	}
	for where, want := range checked {
		if got, ok := stated[where]; !ok {
			t.Errorf("%s: the code checks %d..%d, %s states no range", where, want[0], want[1], openAPIFile)
		} else if got != want {
			t.Errorf("%s: %s states %d..%d, the code checks %d..%d", where, openAPIFile, got[0], got[1], want[0], want[1])
		}
	}
	for where, got := range stated {
		if _, ok := checked[where]; !ok {
			t.Errorf("%s: %s states %d..%d, the code checks no range (add it to api.Ranges)", where, openAPIFile, got[0], got[1])
		}
	}
}
