package universe

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"

	"github.com/cbroglie/mustache"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed package.json config.json marathon.json.mustache resource.json schema/*.json
var files embed.FS

// Files returns the package's files as they are in the repository: the four
// package files at the root and the schemas under schema/.
func Files() fs.FS { return files }

// The package's files, by name.
const (
	PackageFile  = "package.json"
	ConfigFile   = "config.json"
	TemplateFile = "marathon.json.mustache"
	ResourceFile = "resource.json"
)

// schemaFor names the project's schema (under schema/) for each JSON file.
var schemaFor = map[string]string{
	PackageFile:  "schema/package.schema.json",
	ConfigFile:   "schema/config.schema.json",
	ResourceFile: "schema/resource.schema.json",
}

// draft4MetaSchema is the URL the schema library knows the draft-4
// meta-schema by (built in; nothing is fetched).
const draft4MetaSchema = "http://json-schema.org/draft-04/schema"

var (
	// ErrNotASCII: a package file holds a byte above 0x7f, a control
	// character other than tab/newline/CR, or a \uXXXX escape. DC/OS's
	// package manager reads the files as ASCII.
	ErrNotASCII = errors.New("universe: not plain ASCII")
	// ErrJSON: a JSON file does not parse, or repeats a key in an object.
	ErrJSON = errors.New("universe: malformed JSON")
	// ErrSchema: a file (or an options tree) breaks its schema, or
	// config.json is not a valid draft-4 schema.
	ErrSchema = errors.New("universe: schema violation")
	// ErrTemplate: marathon.json.mustache does not parse, names an option
	// that config.json does not define, or leaves braces in its output.
	ErrTemplate = errors.New("universe: bad template")
	// ErrApp: the rendered template is not a valid Marathon app for a
	// stateful framework scheduler.
	ErrApp = errors.New("universe: not a valid Marathon app")
)

// Package is a loaded and validated Universe package.
type Package struct {
	// Resource is resource.json, decoded (numbers as json.Number).
	Resource map[string]any

	config   map[string]any     // config.json, decoded
	options  *jsonschema.Schema // config.json, compiled: validates options
	template *mustache.Template
}

// Load reads the package files (and the schemas) from fsys and checks each:
// ASCII only, well-formed JSON without repeated keys, package.json,
// config.json and resource.json against the project's schemas, config.json
// against the draft-4 meta-schema, and a template that parses and names only
// options that config.json defines (or resource.*).
func Load(fsys fs.FS) (*Package, error) {
	raw := map[string][]byte{}
	for _, name := range []string{PackageFile, ConfigFile, TemplateFile, ResourceFile} {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("universe: %w", err)
		}
		if err := checkASCII(b); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		raw[name] = b
	}
	docs := map[string]any{}
	for _, name := range []string{PackageFile, ConfigFile, ResourceFile} {
		doc, err := decodeJSON(raw[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		sch, err := compileSchemaFile(fsys, schemaFor[name])
		if err != nil {
			return nil, err
		}
		if err := sch.Validate(doc); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", name, ErrSchema, err)
		}
		docs[name] = doc
	}

	p := &Package{}
	p.config, _ = docs[ConfigFile].(map[string]any)
	p.Resource, _ = docs[ResourceFile].(map[string]any)

	meta, err := jsonschema.NewCompiler().Compile(draft4MetaSchema)
	if err != nil {
		return nil, fmt.Errorf("universe: draft-4 meta-schema: %w", err)
	}
	if err := meta.Validate(docs[ConfigFile]); err != nil {
		return nil, fmt.Errorf("%s: %w: not a draft-4 schema: %v", ConfigFile, ErrSchema, err)
	}
	c := newCompiler()
	if err := c.AddResource(ConfigFile, docs[ConfigFile]); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", ConfigFile, ErrSchema, err)
	}
	if p.options, err = c.Compile(ConfigFile); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", ConfigFile, ErrSchema, err)
	}
	// A default that breaks its own option's rules would install a broken
	// service with no options file at all.
	if err := p.options.Validate(p.Defaults()); err != nil {
		return nil, fmt.Errorf("%s: %w: the defaults break the schema: %v", ConfigFile, ErrSchema, err)
	}

	if p.template, err = mustache.ParseString(string(raw[TemplateFile])); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", TemplateFile, ErrTemplate, err)
	}
	scope := map[string]any{"resource": p.Resource}
	for k, v := range p.Defaults() {
		scope[k] = v
	}
	if err := checkTags(p.template.Tags(), scope); err != nil {
		return nil, fmt.Errorf("%s: %w", TemplateFile, err)
	}
	return p, nil
}

// Defaults returns the options tree made of config.json's defaults, shaped
// like config.json's properties: an object property becomes a map of its
// own properties' defaults; a leaf property without a default is left out.
// The caller owns the returned maps.
func (p *Package) Defaults() map[string]any {
	return defaultsOf(p.config)
}

func defaultsOf(schema map[string]any) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	for name, v := range props {
		prop, _ := v.(map[string]any)
		if _, nested := prop["properties"]; nested {
			out[name] = defaultsOf(prop)
		} else if d, ok := prop["default"]; ok {
			out[name] = d
		}
	}
	return out
}

// Options merges a user's options file (JSON; nil or empty for none) over
// the defaults, objects key by key and anything else replaced whole, and
// validates the result against config.json.
func (p *Package) Options(user []byte) (map[string]any, error) {
	opts := p.Defaults()
	if len(bytes.TrimSpace(user)) > 0 {
		doc, err := decodeJSON(user)
		if err != nil {
			return nil, fmt.Errorf("options: %w", err)
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("options: %w: not a JSON object", ErrSchema)
		}
		merge(opts, m)
	}
	if err := p.options.Validate(any(opts)); err != nil {
		return nil, fmt.Errorf("options: %w: %v", ErrSchema, err)
	}
	return opts, nil
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			merge(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// Render renders marathon.json.mustache with options (from Options) and
// resource.json as "resource". A double brace left in the output (a tag
// the renderer did not recognise) is an error.
func (p *Package) Render(options map[string]any) ([]byte, error) {
	scope := map[string]any{"resource": p.Resource}
	for k, v := range options {
		scope[k] = v
	}
	// Load checked that every tag names an option of config.json, and
	// Options validated the tree against config.json, so no variable is
	// missing here; the renderer's global switch for that stays untouched.
	out, err := p.template.Render(scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", TemplateFile, ErrTemplate, err)
	}
	if strings.Contains(out, "{{") || strings.Contains(out, "}}") {
		return nil, fmt.Errorf("%s: %w: unrendered braces in the output", TemplateFile, ErrTemplate)
	}
	return []byte(out), nil
}

// Check loads the package in fsys and renders it with the defaults alone,
// as `dcos package install` with no options file would, and checks the app.
func Check(fsys fs.FS) error {
	p, err := Load(fsys)
	if err != nil {
		return err
	}
	opts, err := p.Options(nil)
	if err != nil {
		return err
	}
	out, err := p.Render(opts)
	if err != nil {
		return err
	}
	_, err = CheckApp(out)
	return err
}

// checkASCII refuses bytes outside printable ASCII (tab, LF and CR allowed)
// and \uXXXX escapes, which would smuggle other characters into JSON.
func checkASCII(b []byte) error {
	line := 1
	for i, c := range b {
		if c == '\n' {
			line++
		}
		if c > 0x7e || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return fmt.Errorf("%w: byte 0x%02x at offset %d (line %d)", ErrNotASCII, c, i, line)
		}
	}
	if loc := unicodeEscape.FindIndex(b); loc != nil {
		return fmt.Errorf("%w: %q escape at offset %d", ErrNotASCII, b[loc[0]:loc[1]], loc[0])
	}
	return nil
}

var unicodeEscape = regexp.MustCompile(`\\u[0-9A-Fa-f]{4}`)

// decodeJSON decodes one JSON value (numbers as json.Number, the form the
// schema library validates) and refuses repeated keys and trailing data.
func decodeJSON(b []byte) (any, error) {
	if err := checkDuplicateKeys(b); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrJSON, err)
	}
	return doc, nil
}

// checkDuplicateKeys walks b's tokens and refuses an object that names a
// key twice (the standard decoder would keep the last one silently).
func checkDuplicateKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		expect bool // in an object, the next token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrJSON, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return fmt.Errorf("%w: key %q repeated at offset %d", ErrJSON, key, dec.InputOffset())
				}
				top.keys[key] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value (or a closed container) ends; in an object, a key follows.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.AssertFormat()
	return c
}

func compileSchemaFile(fsys fs.FS, name string) (*jsonschema.Schema, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("universe: %w", err)
	}
	doc, err := decodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := newCompiler()
	if err := c.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrSchema, err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrSchema, err)
	}
	return sch, nil
}

// checkTags refuses a variable or section whose dotted name does not lead to
// a value in scope (the defaults and resource.json). Sections are checked
// too: the renderer treats a missing section as empty, which would hide a
// typo.
func checkTags(tags []mustache.Tag, scope map[string]any) error {
	for _, t := range tags {
		if t.Type() == mustache.Partial {
			return fmt.Errorf("%w: partial %q: the package has no partials", ErrTemplate, t.Name())
		}
		if !resolves(scope, t.Name()) {
			return fmt.Errorf("%w: %q names no option of config.json and nothing in resource.json", ErrTemplate, t.Name())
		}
		if t.Type() == mustache.Section || t.Type() == mustache.InvertedSection {
			if err := checkTags(t.Tags(), scope); err != nil {
				return err
			}
		}
	}
	return nil
}

func resolves(scope map[string]any, name string) bool {
	var v any = scope
	for _, part := range strings.Split(name, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[part]; !ok {
			return false
		}
	}
	return true
}
