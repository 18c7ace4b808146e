// Package embed assembles Sluice's roles into running servers: it is the
// one place that opens a node, a controller, or both in one process
// (standalone), wires them, serves them, and closes them in the right
// order. cmd/sluice's node, controller and standalone commands and the
// test harnesses (client/clienttest, controller/rest/resttest,
// controller/internal/nodetest) all start their roles through it.
//
// Each role has a config struct with documented defaults
// (DefaultNodeConfig, DefaultControllerConfig, DefaultStandaloneConfig)
// and a Validate method whose error names the field and its range and
// matches ErrInvalidConfig. A program maps its flags into a config;
// a test starts from the defaults and sets a temporary directory and
// 127.0.0.1:0:
//
//	n, err := embed.StartNode(ctx, cfg)     // or StartController, StartStandalone
//	...
//	select {
//	case <-n.Done(): err = n.Err()         // a fatal error of the server
//	case <-ctx.Done():                      // a signal
//	}
//	n.Stop(context.Background())
//
// Start validates the config, opens what the role needs, listens, serves
// and returns once the role is ready (the bound address in Addr or URL);
// on any failure it closes what it had opened, in the reverse order, and
// returns the error. Stop shuts the role down in the reverse order of
// Start, waits for every goroutine it started, and may be called again.
//
// The node role is assembled in the sub-package embed/noderole, which
// this package re-exports (NodeConfig, Node, StartNode): the controller's
// in-package tests start a real node and cannot import a package that
// imports the controller.
//
// Later features (security, metrics, heads) plug in here once: each gets
// a field group in the role's config, a check in its Validate, and its
// place in Start and Stop.
package embed
