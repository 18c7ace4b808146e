package universe_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"path"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/universe"
)

// iconBase is where resource.json's images point: the raw files of
// universe/images/ in the project's repository.
const iconBase = "https://raw.githubusercontent.com/sluice-streams/sluice/main/universe/images/"

// TestIcons: resource.json names the three icons, each an https URL of a
// file under images/ that is a PNG of the size the Universe asks for
// (48, 128 and 256 pixels square).
func TestIcons(t *testing.T) {
	p, err := universe.Load(universe.Files())
	if err != nil {
		t.Fatal(err)
	}
	images, ok := p.Resource["images"].(map[string]any)
	if !ok {
		t.Fatalf("resource.json has no images: %v", p.Resource)
	}
	for name, size := range map[string]int{"icon-small": 48, "icon-medium": 128, "icon-large": 256} {
		url, _ := images[name].(string)
		file, ok := strings.CutPrefix(url, iconBase)
		if !ok || path.Base(file) != file {
			t.Errorf("%s = %q, want a file under %s", name, url, iconBase)
			continue
		}
		img, err := png.Decode(bytes.NewReader(readFile(t, path.Join("images", file))))
		if err != nil {
			t.Errorf("%s: images/%s: %v", name, file, err)
			continue
		}
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
			t.Errorf("%s: images/%s is %dx%d, want %dx%d", name, file, b.Dx(), b.Dy(), size, size)
		}
	}
}

// TestPublishedOptionalFields: what the published packaging 4.0 schema
// allows and the shipped package does not use passes our check too:
// another license with an https URL, and screenshots over https.
func TestPublishedOptionalFields(t *testing.T) {
	files := copyFiles(t)
	pkg := string(files[universe.PackageFile].Data)
	files[universe.PackageFile].Data = []byte(strings.Replace(pkg, shippedLicenses,
		`"licenses": [{"name": "Example License", "url": "https://example.invalid/LICENSE"}],`, 1))
	res := string(files[universe.ResourceFile].Data)
	files[universe.ResourceFile].Data = []byte(strings.Replace(res, `"icon-small":`,
		`"screenshots": ["https://example.invalid/s.png"], "icon-small":`, 1))
	if string(files[universe.PackageFile].Data) == pkg || string(files[universe.ResourceFile].Data) == res {
		t.Fatal("the case changes nothing")
	}
	if err := universe.Check(files); err != nil {
		t.Fatal(err)
	}
}

// TestShippedLicense: package.json names the project's license, and the
// URL points at the LICENSE file at the top of the repository, which
// exists and is that license.
func TestShippedLicense(t *testing.T) {
	var pkg struct {
		Licenses []map[string]any `json:"licenses"`
	}
	if err := json.Unmarshal(readFile(t, "package.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	ls := pkg.Licenses
	if len(ls) != 1 {
		t.Fatalf("package.json licenses %v, want one", ls)
	}
	l := ls[0]
	name, _ := l["name"].(string)
	url, _ := l["url"].(string)
	if url != "https://github.com/sluice-streams/sluice/blob/main/LICENSE" {
		t.Fatalf("license url %q, want the repository's LICENSE", url)
	}
	text := string(readFile(t, "../LICENSE"))
	if !strings.Contains(text, "Apache License") || !strings.Contains(text, "Version 2.0") || name != "Apache License Version 2.0" {
		t.Fatalf("license %q does not match ../LICENSE", name)
	}
}

// shippedLicenses is package.json's licenses line, which cases replace.
const shippedLicenses = `"licenses": [{"name": "Apache License Version 2.0", "url": "https://github.com/sluice-streams/sluice/blob/main/LICENSE"}],`
