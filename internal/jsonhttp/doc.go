// Package jsonhttp holds what the project's JSON-over-HTTP clients (the
// controller's, client/ctlclient, and the scheduler's, scheduler.Client)
// share: building a request whose body is a value encoded as JSON. Each
// client keeps its own error mapping of replies.
package jsonhttp
