// Package viewtest holds test support for tier2/view and the heads that
// serve it: Catalog, a view.Catalog that names scopes and streams from a
// map the test changes while views read it (a stream deleted, a scope
// added, the controller away). Nothing in production imports it.
package viewtest
