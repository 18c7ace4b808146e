package s3gateway

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestGetHeadAndErrors(t *testing.T) {
	f := newFixture(t, Config{})
	key := f.keys("logs")[1]
	want, err := os.ReadFile(f.chunks["logs/"+key])
	if err != nil {
		t.Fatal(err)
	}
	resp, body := f.do(t, "GET", "/logs/"+key, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("GET: %d, %d bytes (want %d)", resp.StatusCode, len(body), len(want))
	}
	etag := resp.Header.Get("ETag")
	if !strings.HasSuffix(etag, `-1"`) || resp.Header.Get("x-amz-request-id") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("GET headers: %v", resp.Header)
	}
	resp, body = f.do(t, "GET", "/logs/"+key, map[string]string{"Range": "bytes=10-19"})
	if resp.StatusCode != 206 || !bytes.Equal(body, want[10:20]) || resp.Header.Get("Content-Range") != "bytes 10-19/"+itoa(len(want)) {
		t.Fatalf("range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = f.do(t, "GET", "/logs/"+key, map[string]string{"Range": "bytes=-5"})
	if resp.StatusCode != 206 || !bytes.Equal(body, want[len(want)-5:]) {
		t.Fatalf("suffix range: %d %q", resp.StatusCode, body)
	}
	resp, body = f.do(t, "GET", "/logs/"+key, map[string]string{"Range": "bytes=" + itoa(len(want)) + "-"})
	if resp.StatusCode != 416 || !strings.Contains(string(body), "<Code>InvalidRange</Code>") {
		t.Fatalf("past the end: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct {
		hdr  map[string]string
		want int
	}{
		{map[string]string{"If-None-Match": etag}, 304},
		{map[string]string{"If-Match": etag}, 200},
		{map[string]string{"If-Match": `"other"`}, 412},
		{map[string]string{"If-Modified-Since": resp.Header.Get("Last-Modified")}, 304},
		{map[string]string{"If-Unmodified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}, 412},
		{map[string]string{"If-Match": etag, "If-Unmodified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}, 200},
	} {
		if resp, _ := f.do(t, "GET", "/logs/"+key, c.hdr); resp.StatusCode != c.want {
			t.Errorf("%v: %d, want %d", c.hdr, resp.StatusCode, c.want)
		}
	}
	for _, c := range []struct {
		method, target, code string
		status               int
	}{
		{"GET", "/nope/x", "NoSuchBucket", 404},
		{"GET", "/logs/clicks/segment=0/x.seq", "NoSuchKey", 404},
		{"GET", "/logs/clicks/segment=1/" + "_tmp.00000000000000000050.seq", "NoSuchKey", 404},
		{"GET", "/logs/clicks/", "NoSuchKey", 404},
		{"PUT", "/logs/clicks/x", "AccessDenied", 403},
		{"DELETE", "/logs/" + key, "AccessDenied", 403},
		{"POST", "/logs?delete", "AccessDenied", 403},
		{"PUT", "/newbucket", "AccessDenied", 403},
		{"GET", "/logs?acl", "NotImplemented", 501},
		{"GET", "/logs/" + key + "?tagging", "NotImplemented", 501},
		{"GET", "/logs?list-type=2&continuation-token=abc", "InvalidArgument", 400},
		{"GET", "/logs?list-type=2&max-keys=-1", "InvalidArgument", 400},
		{"OPTIONS", "/logs", "MethodNotAllowed", 405},
	} {
		resp, body := f.do(t, c.method, c.target, nil)
		if resp.StatusCode != c.status || !strings.Contains(string(body), "<Code>"+c.code+"</Code>") || resp.Header.Get("x-amz-request-id") == "" {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.target, resp.StatusCode, body, c.status, c.code)
		}
	}
	if resp, body := f.do(t, "HEAD", "/logs/nope/segment=0/x.seq", nil); resp.StatusCode != 404 || len(body) != 0 {
		t.Errorf("HEAD missing: %d %q", resp.StatusCode, body)
	}
}

func TestAnonymous(t *testing.T) {
	f := newFixture(t, Config{})
	resp, err := http.Get(f.srv.URL + "/logs?list-type=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("anonymous without Anonymous: %d", resp.StatusCode)
	}
	f = newFixture(t, Config{Anonymous: true})
	resp, err = http.Get(f.srv.URL + "/logs?list-type=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("anonymous with Anonymous: %d", resp.StatusCode)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

type listPage struct {
	keys, prefixes []string
	truncated      bool
	next           string
	keyCount       int
}

func parseList(t testing.TB, body []byte) listPage {
	t.Helper()
	var x struct {
		Contents []struct {
			Key string `xml:"Key"`
		} `xml:"Contents"`
		CommonPrefixes []struct {
			Prefix string `xml:"Prefix"`
		} `xml:"CommonPrefixes"`
		IsTruncated           bool   `xml:"IsTruncated"`
		NextContinuationToken string `xml:"NextContinuationToken"`
		NextMarker            string `xml:"NextMarker"`
		KeyCount              int    `xml:"KeyCount"`
	}
	if err := xml.Unmarshal(body, &x); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	p := listPage{truncated: x.IsTruncated, next: x.NextContinuationToken, keyCount: x.KeyCount}
	if p.next == "" {
		p.next = x.NextMarker
	}
	for _, c := range x.Contents {
		p.keys = append(p.keys, c.Key)
	}
	for _, c := range x.CommonPrefixes {
		p.prefixes = append(p.prefixes, c.Prefix)
	}
	return p
}

func TestRoute(t *testing.T) {
	for _, c := range []struct {
		host, path, domain, bucket, key string
		virtual                         bool
	}{
		{"127.0.0.1:9000", "/logs/clicks/segment=0/x.seq", "", "logs", "clicks/segment=0/x.seq", false},
		{"127.0.0.1:9000", "/logs/", "", "logs", "", false},
		{"127.0.0.1:9000", "/", "", "", "", false},
		{"logs.localhost:9000", "/clicks/segment=0/x.seq", "", "logs", "clicks/segment=0/x.seq", true},
		{"logs.s3.example.com", "/a/b", "s3.example.com", "logs", "a/b", true},
		{"LOGS.S3.EXAMPLE.COM.:80", "/", "s3.example.com", "logs", "", true},
		{"s3.example.com", "/logs/a", "s3.example.com", "logs", "a", false},
		{"my.scope.s3.example.com", "/", "s3.example.com", "my.scope", "", true},
		{"other.example.com", "/logs/a", "s3.example.com", "logs", "a", false},
	} {
		b, k, v, err := Route(c.host, c.path, c.domain)
		if err != nil || b != c.bucket || k != c.key || v != c.virtual {
			t.Errorf("Route(%q, %q, %q) = %q, %q, %v, %v", c.host, c.path, c.domain, b, k, v, err)
		}
	}
}

func TestParseCredentials(t *testing.T) {
	got, err := ParseCredentials("AK1:sec/ret+1, AK2:s:2\n# a comment\n\n  AK3 : s3  \n")
	if err != nil || len(got) != 3 || got["AK1"] != "sec/ret+1" || got["AK2"] != "s:2" || got["AK3"] != "s3" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"AK1", "AK1:", ":s", "AK1:a,AK1:b", "A K:s"} {
		if _, err := ParseCredentials(bad); err == nil {
			t.Errorf("ParseCredentials(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "a,AK1") {
			t.Errorf("error shows a secret: %v", err)
		}
	}
}

// TestSignatureRefusals: S3's codes for requests signed wrongly.
func TestSignatureRefusals(t *testing.T) {
	f := newFixture(t, Config{})
	get := func(mod func(r *http.Request)) (int, string) {
		r, _ := http.NewRequest("GET", f.srv.URL+"/logs?list-type=2", nil)
		mod(r)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct {
			Code string `xml:"Code"`
		}
		b, _ := io.ReadAll(resp.Body)
		xml.Unmarshal(b, &e)
		return resp.StatusCode, e.Code
	}
	for _, c := range []struct {
		name   string
		mod    func(r *http.Request)
		status int
		code   string
	}{
		{"unknown key", func(r *http.Request) { sign(r, "nobody", testSecret, DefaultRegion, time.Now()) }, 403, "InvalidAccessKeyId"},
		{"wrong secret", func(r *http.Request) { sign(r, testKey, "x", DefaultRegion, time.Now()) }, 403, "SignatureDoesNotMatch"},
		{"skewed", func(r *http.Request) { sign(r, testKey, testSecret, DefaultRegion, time.Now().Add(-20*time.Minute)) }, 403, "RequestTimeTooSkewed"},
		{"other region", func(r *http.Request) { sign(r, testKey, testSecret, "eu-west-1", time.Now()) }, 400, "AuthorizationHeaderMalformed"},
		{"v2", func(r *http.Request) { r.Header.Set("Authorization", "AWS "+testKey+":c2ln") }, 400, "InvalidRequest"},
		{"anonymous", func(r *http.Request) {}, 403, "AccessDenied"},
		{"good", func(r *http.Request) { sign(r, testKey, testSecret, DefaultRegion, time.Now()) }, 200, ""},
	} {
		if status, code := get(c.mod); status != c.status || code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, code, c.status, c.code)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Credentials: map[string]string{"a": ""}},
		{Credentials: map[string]string{"a/b": "s"}},
		{Anonymous: true, Domain: "s3.example.com:9000"},
		{Anonymous: true, Region: "eu west"},
		{Anonymous: true, StallTimeout: -1},
	} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for _, c := range []Config{{Anonymous: true}, {Credentials: map[string]string{"a": "b"}, Region: "eu-west-1", Domain: "s3.example.com"}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// An unsigned GetObject or HeadObject may not choose the answer's headers
// (response-content-type and the like): S3's InvalidRequest, so that a
// link to an anonymous head cannot have a browser show a producer's bytes
// as HTML. A signed (or presigned) request may. Every object answer says
// nosniff.
func TestAnonymousResponseOverrides(t *testing.T) {
	f := newFixture(t, Config{Anonymous: true})
	key := "/logs/" + f.keys("logs")[0]
	const overrides = "?response-content-type=text/html&response-content-disposition=inline"
	for _, method := range []string{"GET", "HEAD"} {
		r, err := http.NewRequest(method, f.srv.URL+key+overrides, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := f.srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || strings.Contains(resp.Header.Get("Content-Type"), "html") || resp.Header.Get("Content-Disposition") != "" {
			t.Fatalf("unsigned %s with overrides: %d %v", method, resp.StatusCode, resp.Header)
		}
		if method == "GET" && (!strings.Contains(string(body), "<Code>InvalidRequest</Code>") ||
			!strings.Contains(string(body), "Request specific response headers cannot be used for anonymous GET requests.")) {
			t.Fatalf("unsigned GET with overrides: %s", body)
		}
	}
	resp, err := f.srv.Client().Get(f.srv.URL + key)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("unsigned GET: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = f.do(t, "GET", key+overrides, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html" || resp.Header.Get("Content-Disposition") != "inline" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("signed GET with overrides: %d %v", resp.StatusCode, resp.Header)
	}
}

// An unsigned request is served only when its Host is a name no web page
// can own (AllowedHost), whatever address the connection came in on: a
// head in a container whose port is published on the host's 127.0.0.1
// sees its connections arrive on the container's own address (172.17.x.x
// with Docker), and a head on every interface of a LAN machine on its LAN
// address, and a page that re-points its own name there (DNS rebinding)
// sends that name as Host. So the test serves the handler three ways:
// on 127.0.0.1, and on 127.0.0.1 with every connection reporting a
// container's or a LAN IPv6 local address, as net/http then tells the
// handler (http.LocalAddrContextKey). Signed requests, which no page can
// forge, are served whatever their Host.
func TestUnsignedForeignHostIsRefused(t *testing.T) {
	f := newFixture(t, Config{Anonymous: true, Domain: "s3.example.com", AllowedHosts: []string{"agent-7.corp.example"}})
	for _, local := range []net.Addr{
		nil, // the listener's own 127.0.0.1
		&net.TCPAddr{IP: net.IPv4(172, 17, 0, 2), Port: 9000},
		&net.TCPAddr{IP: net.ParseIP("2001:db8::5"), Port: 9000},
	} {
		srv := f.srv
		if local != nil {
			srv = localAddrServer(t, f.srv.Config.Handler, local)
		}
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		get := func(host, path string, signed bool) (*http.Response, string) {
			t.Helper()
			r, err := http.NewRequest("GET", srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Host = host
			if signed {
				sign(r, testKey, testSecret, DefaultRegion, time.Now())
			}
			resp, err := srv.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp, string(body)
		}
		for _, host := range []string{"attacker.example:" + port, "attacker.example", "localhost.attacker.example:" + port, "127.0.0.1.nip.io:" + port, "s3.example.com.attacker.example", "agent-7.corp.example.attacker.example"} {
			resp, body := get(host, "/logs?list-type=2", false)
			if resp.StatusCode != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") || !strings.Contains(body, "DNS rebinding") ||
				!strings.Contains(body, "Host &#34;"+host+"&#34;") || !strings.Contains(body, "--allowed-hosts") {
				t.Errorf("local address %v: unsigned, Host %s: %d %s", local, host, resp.StatusCode, body)
			}
			if resp, body := get(host, "/logs?list-type=2", true); resp.StatusCode != 200 {
				t.Errorf("local address %v: signed, Host %s: %d %s", local, host, resp.StatusCode, body)
			}
		}
		for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost", "127.1.2.3:" + port, "[::1]:" + port,
			"0.0.0.0:" + port, "127.1:" + port, "172.17.0.2:" + port, "[2001:db8::5]:" + port, "localhost.localdomain:" + port, "ip6-localhost",
			"s3.example.com:" + port, "agent-7.corp.example:" + port} {
			if resp, body := get(host, "/logs?list-type=2", false); resp.StatusCode != 200 {
				t.Errorf("local address %v: unsigned, Host %s: %d %s", local, host, resp.StatusCode, body)
			}
		}
		// Virtual-hosted: the bucket in the Host.
		for _, host := range []string{"logs.localhost:" + port, "logs.s3.example.com"} {
			resp, body := get(host, "/?list-type=2", false)
			if resp.StatusCode != 200 || len(parseList(t, []byte(body)).keys) == 0 {
				t.Errorf("local address %v: unsigned, Host %s: %d %s", local, host, resp.StatusCode, body)
			}
		}
	}
}

// "*" in AllowedHosts serves unsigned requests with any Host: the guard
// is off.
func TestAllowedHostsStar(t *testing.T) {
	f := newFixture(t, Config{Anonymous: true, AllowedHosts: []string{"*"}})
	srv := localAddrServer(t, f.srv.Config.Handler, &net.TCPAddr{IP: net.IPv4(172, 17, 0, 2), Port: 9000})
	for _, host := range []string{"attacker.example", "127.0.0.1.nip.io:9000"} {
		r, _ := http.NewRequest("GET", srv.URL+"/logs?list-type=2", nil)
		r.Host = host
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("unsigned, Host %s: %d %s", host, resp.StatusCode, body)
		}
	}
}

// localAddrServer serves h on 127.0.0.1, every connection reporting local
// as its local address: what net/http puts in http.LocalAddrContextKey
// for a head reached on another address of its machine.
func localAddrServer(t *testing.T, h http.Handler, local net.Addr) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = localAddrListener{Listener: srv.Listener, local: local}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

type localAddrListener struct {
	net.Listener
	local net.Addr
}

func (l localAddrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return localAddrConn{Conn: c, local: l.local}, nil
}

type localAddrConn struct {
	net.Conn
	local net.Addr
}

func (c localAddrConn) LocalAddr() net.Addr { return c.local }

func TestAllowedHost(t *testing.T) {
	allowed := []string{"agent-7.corp.example", "Agent-7", "nas.lan."}
	for _, c := range []struct {
		host, domain string
		want         bool
	}{
		{"localhost", "", true},
		{"localhost:9000", "", true},
		{"LOGS.LOCALHOST.:9000", "", true},
		{"localhost.localdomain:9000", "", true},
		{"ip6-localhost", "", true},
		{"ip6-loopback:9000", "", true},
		// Every IP literal, and names a browser reads as IPv4.
		{"127.0.0.1", "", true},
		{"127.255.0.9:1", "", true},
		{"0.0.0.0:9000", "", true},
		{"10.0.0.1:9000", "", true},
		{"172.17.0.2", "", true},
		{"[::1]:9000", "", true},
		{"[::1]", "", true},
		{"[::]:9000", "", true},
		{"[2001:db8::7]", "", true},
		{"127.1:9000", "", true},
		{"127.0.1", "", true},
		{"0x7f.1", "", true},
		{"2130706433", "", true},
		{"s3.example.com", "s3.example.com", true},
		{"logs.s3.example.com:443", "s3.example.com", true},
		{"agent-7.corp.example:9000", "", true},
		{"AGENT-7", "", true},
		{"nas.lan", "", true},
		{"", "", false},
		{"attacker.example", "", false},
		{"localhost.attacker.example", "", false},
		{"127.0.0.1.nip.io", "", false},
		{"1.2.3.4.attacker.example", "", false},
		{"0x7f.attacker", "", false},
		{"notlocalhost", "", false},
		{"localdomain", "", false},
		{"examples3.example.com", "s3.example.com", false},
		{"s3.example.com", "", false},
		{"agent-7.corp.example.attacker.example", "", false},
		{"corp.example", "", false},
	} {
		if got := AllowedHost(c.host, c.domain, allowed); got != c.want {
			t.Errorf("AllowedHost(%q, %q, %q) = %v", c.host, c.domain, allowed, got)
		}
	}
	for _, host := range []string{"attacker.example", "x", "127.0.0.1.nip.io:80"} {
		if !AllowedHost(host, "", []string{"nas.lan", "*"}) {
			t.Errorf("AllowedHost(%q) with * = false", host)
		}
	}
}
