package mesosauth

import "errors"

var (
	// ErrConfig: the credential is missing, malformed or contradicts
	// the configured principal.
	ErrConfig = errors.New("mesosauth: bad credential")
	// ErrRefused: the Mesos master answered 401 or 403 to a call.
	ErrRefused = errors.New("mesosauth: the Mesos master refused the call")
	// ErrLogin: the DC/OS login endpoint refused the service login or
	// could not be reached.
	ErrLogin = errors.New("mesosauth: DC/OS service login failed")
)
