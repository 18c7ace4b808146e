package docs

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goFolders returns every folder under root holding .go files, relative
// to root with slashes, skipping hidden folders, testdata and vendor (as
// the go command does).
func goFolders(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// tableFirstColumn returns the code spans in the first column of the
// table rows of the section headed heading (up to the next heading of
// that level or above), with trailing slashes removed. It fails the test
// if there is no such section or it has no rows.
func tableFirstColumn(t *testing.T, file, md, heading string) map[string]bool {
	t.Helper()
	level := strings.Count(strings.Fields(heading)[0], "#")
	in, fenced := false, false
	names := map[string]bool{}
	for _, l := range strings.Split(md, "\n") {
		if fenceRE.MatchString(l) {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(l, "#") {
			h := strings.Fields(l)[0]
			if in && strings.Count(h, "#") <= level && strings.Trim(h, "#") == "" {
				break
			}
			if strings.TrimSpace(l) == heading {
				in = true
			}
			continue
		}
		if !in || !strings.HasPrefix(strings.TrimSpace(l), "|") {
			continue
		}
		cells := strings.Split(strings.TrimSpace(l), "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range codeSpanRE.FindAllStringSubmatch(cells[1], -1) {
			names[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no table with `folder` names under %q", file, heading)
	}
	return names
}

// TestArchitectureMapListsEveryFolder: every folder holding Go files has a
// row in docs/ARCHITECTURE.md's map of folders (the Packages table).
func TestArchitectureMapListsEveryFolder(t *testing.T) {
	root := repoRoot(t)
	const file, heading = "docs/ARCHITECTURE.md", "## Packages"
	md, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	listed := tableFirstColumn(t, file, string(md), heading)
	for _, f := range goFolders(t, root) {
		if f != "." && !listed[f] {
			t.Errorf("%s: folder %s holds Go files but is not in the map of folders: add a row to the table under %q whose first column is `%s`, saying what it owns", file, f, heading, f)
		}
	}
}

// TestReadmeLayoutListsEveryTopFolder: every top-level folder holding Go
// files has a row in README.md's layout table.
func TestReadmeLayoutListsEveryTopFolder(t *testing.T) {
	root := repoRoot(t)
	const file, heading = "README.md", "## Layout"
	md, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	listed := tableFirstColumn(t, file, string(md), heading)
	tops := map[string]bool{}
	for _, f := range goFolders(t, root) {
		top, _, _ := strings.Cut(f, "/")
		tops[top] = true
	}
	for top := range tops {
		if top == "." || listed[top] {
			continue
		}
		// A row may name the folder only through its packages (cmd/sluice).
		if !slices.ContainsFunc(slices.Collect(maps.Keys(listed)), func(n string) bool { return strings.HasPrefix(n, top+"/") }) {
			t.Errorf("%s: top-level folder %s/ holds Go files but is not in the layout table: add a row under %q whose first column is `%s/`, saying what is there", file, top, heading, top)
		}
	}
}
