package universe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
)

// App is the subset of a Marathon app definition (v2 apps API) that the
// package's template uses. CheckApp decodes strictly into it, so a field
// the template misspells is an error; a field added to the template must
// be added here too.
type App struct {
	ID              string            `json:"id"`
	Cmd             string            `json:"cmd"`
	Args            []string          `json:"args"`
	CPUs            float64           `json:"cpus"`
	Mem             float64           `json:"mem"`
	Instances       int               `json:"instances"`
	User            string            `json:"user"`
	Env             map[string]any    `json:"env"`
	Secrets         map[string]Secret `json:"secrets"`
	Fetch           []Fetch           `json:"fetch"`
	PortDefinitions []PortDefinition  `json:"portDefinitions"`
	RequirePorts    bool              `json:"requirePorts"`
	HealthChecks    []HealthCheck     `json:"healthChecks"`
	UpgradeStrategy *UpgradeStrategy  `json:"upgradeStrategy"`
	Labels          map[string]string `json:"labels"`
}

// Secret is a secret the app declares: Source is its path in the DC/OS
// secret store. An env value {"secret": NAME} is the secret's content.
type Secret struct {
	Source string `json:"source"`
}

// Fetch is one URI the Mesos fetcher downloads into the sandbox.
type Fetch struct {
	URI        string `json:"uri"`
	Extract    bool   `json:"extract"`
	Executable bool   `json:"executable"`
	Cache      bool   `json:"cache"`
}

// PortDefinition is one host port Marathon gives the app ($PORT0, ...).
type PortDefinition struct {
	Port     int               `json:"port"`
	Protocol string            `json:"protocol"`
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
}

// HealthCheck is one of the app's health checks.
type HealthCheck struct {
	Protocol               string `json:"protocol"`
	Path                   string `json:"path"`
	PortIndex              *int   `json:"portIndex"`
	GracePeriodSeconds     int    `json:"gracePeriodSeconds"`
	IntervalSeconds        int    `json:"intervalSeconds"`
	TimeoutSeconds         int    `json:"timeoutSeconds"`
	MaxConsecutiveFailures int    `json:"maxConsecutiveFailures"`
}

// UpgradeStrategy says how many instances may be down or extra during a
// deployment, as fractions of the instance count.
type UpgradeStrategy struct {
	MinimumHealthCapacity *float64 `json:"minimumHealthCapacity"`
	MaximumOverCapacity   *float64 `json:"maximumOverCapacity"`
}

// Labels the DC/OS admin router and package manager read from the app.
const (
	LabelFrameworkName = "DCOS_PACKAGE_FRAMEWORK_NAME"
	LabelServiceName   = "DCOS_SERVICE_NAME"
	LabelPortIndex     = "DCOS_SERVICE_PORT_INDEX"
	LabelScheme        = "DCOS_SERVICE_SCHEME"
)

// appID is a Marathon app id: path segments of lower-case letters, digits
// and inner '-', with an optional leading '/'.
var appID = regexp.MustCompile(`^/?[a-z0-9]([a-z0-9-]*[a-z0-9])?(/[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// CheckApp decodes a rendered template and checks that it is a Marathon
// app fit for a stateful framework scheduler: an id, a command (cmd or
// args, not both), positive cpus and mem, exactly one instance, env values
// that are strings or {"secret": NAME} naming a declared secret (each
// declared one used), something to fetch, one port, HTTP health checks on that port, an
// upgrade strategy that never runs two schedulers at once, and the labels
// that make the admin router expose the scheduler's API.
func CheckApp(rendered []byte) (*App, error) {
	dec := json.NewDecoder(bytes.NewReader(rendered))
	dec.DisallowUnknownFields()
	var app App
	if err := dec.Decode(&app); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrApp, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the app object", ErrApp)
	}
	fail := func(format string, args ...any) (*App, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrApp}, args...)...)
	}
	switch {
	case !appID.MatchString(app.ID):
		return fail("id %q is not a Marathon app id", app.ID)
	case (app.Cmd == "") == (len(app.Args) == 0):
		return fail("needs exactly one of cmd and args")
	case app.CPUs <= 0:
		return fail("cpus %v is not positive", app.CPUs)
	case app.Mem <= 0:
		return fail("mem %v is not positive", app.Mem)
	case app.Instances != 1:
		return fail("instances is %d; a framework scheduler runs exactly once", app.Instances)
	case len(app.Fetch) == 0:
		return fail("fetches nothing: the sluice binary must come from resource.json")
	case len(app.PortDefinitions) != 1:
		return fail("has %d port definitions; the scheduler's API needs exactly one", len(app.PortDefinitions))
	case len(app.HealthChecks) == 0:
		return fail("has no health check")
	case app.UpgradeStrategy == nil || app.UpgradeStrategy.MinimumHealthCapacity == nil || app.UpgradeStrategy.MaximumOverCapacity == nil:
		return fail("upgradeStrategy must set minimumHealthCapacity and maximumOverCapacity")
	case *app.UpgradeStrategy.MinimumHealthCapacity != 0 || *app.UpgradeStrategy.MaximumOverCapacity != 0:
		return fail("upgradeStrategy must be 0/0 so two schedulers never run at once")
	}
	used := map[string]bool{}
	for k, v := range app.Env {
		switch v := v.(type) {
		case string:
		case map[string]any:
			name, ok := v["secret"].(string)
			if !ok || len(v) != 1 {
				return fail("env %s is an object but not {\"secret\": NAME}", k)
			}
			if _, ok := app.Secrets[name]; !ok {
				return fail("env %s names secret %q, which the app does not declare", k, name)
			}
			used[name] = true
		default:
			return fail("env %s is %T, not a string", k, v)
		}
	}
	for name, sec := range app.Secrets {
		switch {
		case sec.Source == "":
			return fail("secret %q has no source", name)
		case !used[name]:
			return fail("secret %q is declared but no env uses it", name)
		}
	}
	for _, f := range app.Fetch {
		if u, err := url.Parse(f.URI); err != nil || u.Scheme == "" || u.Host == "" {
			return fail("fetch uri %q is not an absolute URL", f.URI)
		}
	}
	for i, h := range app.HealthChecks {
		switch {
		case h.Protocol != "HTTP" && h.Protocol != "HTTPS" && h.Protocol != "MESOS_HTTP" && h.Protocol != "MESOS_HTTPS":
			return fail("health check %d: protocol %q is not an HTTP check", i, h.Protocol)
		case len(h.Path) == 0 || h.Path[0] != '/':
			return fail("health check %d: path %q does not start with /", i, h.Path)
		case h.PortIndex == nil || *h.PortIndex < 0 || *h.PortIndex >= len(app.PortDefinitions):
			return fail("health check %d: portIndex missing or out of range", i)
		}
	}
	name := app.Labels[LabelServiceName]
	switch {
	case name == "":
		return fail("label %s missing", LabelServiceName)
	case app.Labels[LabelFrameworkName] != name:
		return fail("label %s is %q, not the service name %q", LabelFrameworkName, app.Labels[LabelFrameworkName], name)
	case app.Labels[LabelScheme] != "http" && app.Labels[LabelScheme] != "https":
		return fail("label %s is %q, not http or https", LabelScheme, app.Labels[LabelScheme])
	}
	if n, err := strconv.Atoi(app.Labels[LabelPortIndex]); err != nil || n < 0 || n >= len(app.PortDefinitions) {
		return fail("label %s is %q, not the index of a port definition", LabelPortIndex, app.Labels[LabelPortIndex])
	}
	return &app, nil
}
