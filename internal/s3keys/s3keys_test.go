package s3keys

import (
	"errors"
	"maps"
	"regexp"
	"slices"
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

// faults are the only things an error of Parse says after the position:
// none holds any of the text.
var faults = []string{
	"want ACCESS:SECRET (no colon)",
	"empty access key",
	"the access key holds '/', a space or a tab: is the pair SECRET:ACCESS, or a space where the colon belongs?",
	"the access key starts with '#'",
	"empty secret",
	"the access key is given twice",
}

// errorShape matches an error of Parse: the sentinel, the position, the
// fault (checked against faults) and nothing else.
var errorShape = regexp.MustCompile(`^s3keys: invalid access keys: line [0-9]+, pair [0-9]+: (.*)$`)

// checkError fails t unless err is an error of Parse as errorShape and
// faults say, so that it shows none of the text.
func checkError(t *testing.T, text string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Parse(%q) = %v, want ErrInvalid", text, err)
	}
	m := errorShape.FindStringSubmatch(err.Error())
	if m == nil || !slices.Contains(faults, m[1]) {
		t.Fatalf("Parse(%q) = %q: want the position and one of the fixed faults, nothing of the text", text, err)
	}
}

// TestParseRefuses: every form a head refuses at start, and what the
// error says, which is never any of the text.
func TestParseRefuses(t *testing.T) {
	const secret = "Never-Shown-9"
	for _, c := range []struct{ text, says string }{
		{secret, "line 1, pair 1: want ACCESS:SECRET"},
		{"AK:" + secret + ",AK", "pair 2: want ACCESS:SECRET"},
		{"AK:", "line 1, pair 1: empty secret"},
		{":" + secret, "empty access key"},
		{"A K:" + secret, "holds '/', a space"},
		{"A/K:" + secret, "holds '/', a space"},
		{"AK:a,#K:" + secret, "pair 2: the access key starts with '#'"},
		{"AK:" + secret + ",AK:b", "line 1, pair 2: the access key is given twice"},
		{"AK:" + secret + "\nAK:" + secret, "line 2, pair 1: the access key is given twice"},
	} {
		_, err := Parse(c.text)
		checkError(t, c.text, err)
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("Parse(%q) = %v, want it to say %q", c.text, err, c.says)
		}
	}
}

// TestParseSwappedHidesSecret: the likeliest mistakes put the secret
// where the access key belongs (the pair written SECRET:ACCESS, AWS
// secrets holding '/'; a space where the colon belongs). The error then
// shows no part of the secret, nor of the access key: no four bytes of
// either in a row.
func TestParseSwappedHidesSecret(t *testing.T) {
	const (
		ak = "AKIDEXAMPLE"
		sk = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	)
	for _, text := range []string{
		sk + ":" + ak,
		ak + " " + sk + ":x",
		"OK:fine\n" + sk + ":" + ak,
		ak + ":" + sk + "," + ak + ":" + sk,
	} {
		_, err := Parse(text)
		checkError(t, text, err)
		for _, part := range []string{ak, sk} {
			for i := 0; i+4 <= len(part); i++ {
				if strings.Contains(err.Error(), part[i:i+4]) {
					t.Errorf("Parse(%q) = %q: shows %q of %q", text, err, part[i:i+4], part)
				}
			}
		}
	}
}

// FuzzParse: Parse never panics; what it accepts follows the rules and
// reads back the same once written out; and an error is the position and
// one of the fixed faults, so it shows none of the text, wherever a
// secret or a key sits. '$' in the input stands for a marker, so that the
// seeds put secret-like text in every place.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "AK:$", "AK:$,AK:b", "$", "A K:$", "AK:\n# $\nB:$:$", ":$", "AK$:x", " AK : $ , , B:c", "0:0,#0:0", "$/x:AK", "AK $:x", "AK:$\nAK:$"} {
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
			checkError(t, text, err)
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
