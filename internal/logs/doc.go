// Package logs owns the module's rule for a missing logger: a component
// given no logger (nil) logs nothing. A library or role is silent unless
// its caller hands it a logger; the binary always does, so what an
// operator sees is chosen in one place, where the roles are wired.
package logs
