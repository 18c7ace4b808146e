package webhdfs

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Bounds of a request, checked before anything is looked up.
const (
	// Prefix starts every WebHDFS URL path; what follows is the file's path.
	Prefix = "/webhdfs/v1"
	// MaxPath bounds a decoded path in bytes (tier-2 paths are far
	// shorter).
	MaxPath = 4096
	// MaxQuery bounds the raw query string in bytes.
	MaxQuery = 8192
	// MaxUser bounds user.name.
	MaxUser = 256
)

// userPattern is Hadoop's default dfs.webhdfs.user.provider.user.pattern.
var userPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._-]*[$]?$`)

// defaultUser is the user of a request without user.name: Hadoop's static
// web user.
const defaultUser = "dr.who"

// request is one parsed WebHDFS call.
type request struct {
	op   string // upper case, as Hadoop's enum names it
	path string // cleaned, without leading slash; "" is the root
	user string
	q    url.Values
	// mutating: the method or the op would change the tree.
	mutating bool
}

// display is the path as HDFS prints it in messages.
func (r request) display() string { return "/" + r.path }

// getOps are the GET ops of Hadoop 3.5's GetOpParam (also the ones this
// handler refuses as unsupported), so an unknown name can be told from a
// known one.
var getOps = map[string]bool{
	"OPEN": true, "GETFILESTATUS": true, "LISTSTATUS": true, "GETCONTENTSUMMARY": true,
	"GETQUOTAUSAGE": true, "GETFILECHECKSUM": true, "GETHOMEDIRECTORY": true,
	"GETDELEGATIONTOKEN": true, "GET_BLOCK_LOCATIONS": true, "GETFILEBLOCKLOCATIONS": true,
	"GETACLSTATUS": true, "GETXATTRS": true, "GETTRASHROOT": true, "GETTRASHROOTS": true,
	"LISTXATTRS": true, "GETALLSTORAGEPOLICY": true, "GETSTORAGEPOLICY": true,
	"CHECKACCESS": true, "LISTSTATUS_BATCH": true, "GETSERVERDEFAULTS": true,
	"GETSNAPSHOTDIFF": true, "GETSNAPSHOTDIFFLISTING": true, "GETSNAPSHOTTABLEDIRECTORYLIST": true,
	"GETSNAPSHOTLIST": true, "GETECPOLICIES": true, "GETECCODECS": true, "GETECPOLICY": true,
	"GETSTATUS": true, "GETFILELINKSTATUS": true, "GETLINKTARGET": true, "NULL": true,
}

// mutatingOps are the PUT, POST and DELETE ops of Hadoop 3.5: refused
// whatever the method they come with.
var mutatingOps = map[string]bool{
	"CREATE": true, "MKDIRS": true, "CREATESYMLINK": true, "RENAME": true,
	"SETREPLICATION": true, "SETOWNER": true, "SETPERMISSION": true, "SETTIMES": true,
	"RENEWDELEGATIONTOKEN": true, "CANCELDELEGATIONTOKEN": true,
	"MODIFYACLENTRIES": true, "REMOVEACLENTRIES": true, "REMOVEDEFAULTACL": true,
	"REMOVEACL": true, "SETACL": true, "SETXATTR": true, "REMOVEXATTR": true,
	"ENABLEECPOLICY": true, "DISABLEECPOLICY": true, "SETECPOLICY": true,
	"ALLOWSNAPSHOT": true, "DISALLOWSNAPSHOT": true, "CREATESNAPSHOT": true,
	"RENAMESNAPSHOT": true, "SETSTORAGEPOLICY": true, "SATISFYSTORAGEPOLICY": true,
	"SETQUOTA": true, "SETQUOTABYSTORAGETYPE": true,
	"APPEND": true, "CONCAT": true, "TRUNCATE": true, "UNSETSTORAGEPOLICY": true,
	"UNSETECPOLICY": true, "DELETE": true, "DELETESNAPSHOT": true,
}

// parseRequest checks and parses a request's method, escaped URL path
// and raw query. Errors are *remoteError values (400 or 403).
func parseRequest(method, escapedPath, rawQuery string) (request, error) {
	var r request
	if len(escapedPath) > len(Prefix)+3*MaxPath {
		return r, badRequest("path of %d bytes: longer than %d", len(escapedPath), MaxPath)
	}
	if len(rawQuery) > MaxQuery {
		return r, badRequest("query of %d bytes: longer than %d", len(rawQuery), MaxQuery)
	}
	rest, ok := strings.CutPrefix(escapedPath, Prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return r, notFoundf("no WebHDFS resource at %q: paths start with %s/", truncate(escapedPath), Prefix)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return r, badRequest("path %q: %v", truncate(rest), err)
	}
	if len(p) > MaxPath {
		return r, badRequest("path of %d bytes: longer than %d", len(p), MaxPath)
	}
	if strings.ContainsRune(p, 0) {
		return r, badRequest("path %q: contains NUL", truncate(p))
	}
	r.path = strings.Trim(p, "/")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return r, badRequest("query: %v", err)
	}
	r.q = q
	r.op = strings.ToUpper(q.Get("op"))
	r.user = defaultUser
	if u := q.Get("user.name"); u != "" {
		if len(u) > MaxUser || !userPattern.MatchString(u) {
			return r, badRequest(`Invalid value: "user.name" = %q does not belong to the domain %s`, truncate(u), userPattern)
		}
		r.user = u
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		r.mutating = mutatingOps[r.op]
		if !r.mutating && !getOps[r.op] {
			if r.op == "" {
				return r, badRequest(`Invalid value for webhdfs parameter "op": no op given`)
			}
			return r, badRequest(`Invalid value for webhdfs parameter "op": No enum constant for GET %s`, truncate(r.op))
		}
	case http.MethodPut, http.MethodPost, http.MethodDelete:
		r.mutating = true
	default:
		return r, badRequest("method %s is not a WebHDFS method", truncate(method))
	}
	return r, nil
}

// truncate shortens what a client sent before it goes into a message.
func truncate(s string) string {
	const max = 128
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// longParam returns the query parameter name as a non-negative int64, or
// def when absent, refusing anything else in Hadoop's words.
func (r request) longParam(name string, def int64) (int64, error) {
	s := r.q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest(`Invalid value for webhdfs parameter %q: For input string: %q`, name, truncate(s))
	}
	if min := paramMin(name); n < min {
		return 0, badRequest(`Invalid value for webhdfs parameter %q: java.lang.IllegalArgumentException: Invalid parameter range: %s = %d < %d`, name, name, n, min)
	}
	return n, nil
}

// paramMin is the least value of a numeric parameter.
func paramMin(name string) int64 {
	if name == "buffersize" {
		return 1
	}
	return 0
}

// checkParams checks the numeric parameters every op may carry.
func (r request) checkParams() error {
	for _, name := range []string{"offset", "length", "buffersize"} {
		if _, err := r.longParam(name, 0); err != nil {
			return err
		}
	}
	return nil
}

// fsAction parses CHECKACCESS's fsaction ("r-x" and so on).
func fsAction(s string) (read, write, exec bool, err error) {
	if len(s) != 3 || (s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') || (s[2] != 'x' && s[2] != '-') {
		return false, false, false, badRequest(`Invalid value for webhdfs parameter "fsaction": %q is not of the form [r-][w-][x-]`, truncate(s))
	}
	return s[0] == 'r', s[1] == 'w', s[2] == 'x', nil
}
