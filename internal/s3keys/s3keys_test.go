package s3keys

import (
	"errors"
	"maps"
	"sort"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		text string
		want map[string]string
	}{
		{"", map[string]string{}},
		{"AK:s", map[string]string{"AK": "s"}},
		{"AK1:sec/ret+1, AK2:s:2\n# a comment\n\n  AK3 : s3  \n", map[string]string{"AK1": "sec/ret+1", "AK2": "s:2", "AK3": "s3"}},
		{"AK1:a,,AK2:b,\r\n", map[string]string{"AK1": "a", "AK2": "b"}},
		{"# only a comment\n", map[string]string{}},
	} {
		got, err := Parse(c.text)
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
}

// TestParseRefuses: every form a head refuses at start, and the error
// never shows a secret.
func TestParseRefuses(t *testing.T) {
	const secret = "Never-Shown-9"
	for _, c := range []struct{ text, says string }{
		{secret, "line 1, pair 1: want ACCESS:SECRET"},
		{"AK:" + secret + ",AK", "pair 2: want ACCESS:SECRET"},
		{"AK:", `"AK" has an empty secret`},
		{":" + secret, "empty access key"},
		{"A K:" + secret, `access key "A K": no '/'`},
		{"A/K:" + secret, `access key "A/K"`},
		{"AK:a,#K:" + secret, `access key "#K"`},
		{"AK:" + secret + ",AK:b", `line 1, pair 2: access key "AK" given twice`},
		{"AK:" + secret + "\nAK:" + secret, `line 2, pair 1: access key "AK" given twice`},
	} {
		_, err := Parse(c.text)
		switch {
		case !errors.Is(err, ErrInvalid):
			t.Errorf("Parse(%q) = %v, want ErrInvalid", c.text, err)
		case !strings.Contains(err.Error(), c.says):
			t.Errorf("Parse(%q) = %v, want it to say %q", c.text, err, c.says)
		case strings.Contains(err.Error(), secret):
			t.Errorf("Parse(%q): the error shows the secret: %v", c.text, err)
		}
	}
}

// FuzzParse: Parse never panics; what it accepts follows the rules and
// reads back the same once written out; and when a marker appears only
// where a secret may be (after a colon, or in a pair without one), no
// error shows it. '$' in the input stands for the marker.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "AK:$", "AK:$,AK:b", "$", "A K:$", "AK:\n# $\nB:$:$", ":$", "AK$:x", " AK : $ , , B:c", "0:0,#0:0"} {
		f.Add(s)
	}
	const marker = "MaRkEr-7"
	f.Fuzz(func(t *testing.T, layout string) {
		text := strings.ReplaceAll(layout, "$", marker)
		got, err := Parse(text)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			inKey := false
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				for _, pair := range strings.Split(line, ",") {
					if ak, _, ok := strings.Cut(pair, ":"); ok && strings.Contains(ak, marker) {
						inKey = true
					}
				}
			}
			if !inKey && strings.Contains(err.Error(), marker) {
				t.Fatalf("Parse(%q): the error shows a secret: %v", text, err)
			}
			return
		}
		var pairs []string
		for ak, sk := range got {
			if ak == "" || sk == "" || strings.ContainsAny(ak, "/ \t\n,:") || strings.ContainsAny(sk, "\n,") {
				t.Fatalf("Parse(%q) accepted %q:%q", text, ak, sk)
			}
			pairs = append(pairs, ak+":"+sk)
		}
		sort.Strings(pairs)
		again, err := Parse(strings.Join(pairs, "\n"))
		if err != nil || !maps.Equal(again, got) {
			t.Fatalf("Parse(%q) = %v, written out and parsed again: %v, %v", text, got, again, err)
		}
	})
}
