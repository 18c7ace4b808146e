package webhdfs

import (
	"errors"
	"fmt"
	"net/http"
)

// Errors of the handler; classify with errors.Is. Every error a client
// sees is a *remoteError wrapping one of them.
var (
	// ErrReadOnly: a mutating request (PUT, POST, DELETE, or a mutating op).
	ErrReadOnly = errors.New("webhdfs: read-only")
	// ErrBadRequest: a malformed path, query, parameter or op.
	ErrBadRequest = errors.New("webhdfs: bad request")
	// ErrUnsupported: an op this handler does not serve.
	ErrUnsupported = errors.New("webhdfs: unsupported operation")
)

// ReadOnlyMessage is what every mutating request is refused with: Hadoop's
// clients print it after the command's name ("mkdir: Permission denied: ...").
const ReadOnlyMessage = "Permission denied: sluice's HDFS head is read-only"

// remoteError is an error as a Hadoop client reads it: an HTTP status and
// a RemoteException body naming a Java exception class.
type remoteError struct {
	status    int
	exception string // simple name
	javaClass string
	message   string
	err       error // a sentinel of this package or of tier2/view
}

func (e *remoteError) Error() string { return e.javaClass + ": " + e.message }
func (e *remoteError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) *remoteError {
	return &remoteError{http.StatusBadRequest, "IllegalArgumentException", "java.lang.IllegalArgumentException", fmt.Sprintf(format, args...), ErrBadRequest}
}

func notFoundf(format string, args ...any) *remoteError {
	return &remoteError{http.StatusNotFound, "FileNotFoundException", "java.io.FileNotFoundException", fmt.Sprintf(format, args...), nil}
}

func readOnly() *remoteError {
	return &remoteError{http.StatusForbidden, "AccessControlException", "org.apache.hadoop.security.AccessControlException", ReadOnlyMessage, ErrReadOnly}
}

func accessDenied(format string, args ...any) *remoteError {
	return &remoteError{http.StatusForbidden, "AccessControlException", "org.apache.hadoop.security.AccessControlException", "Permission denied: " + fmt.Sprintf(format, args...), ErrReadOnly}
}

func unsupported(op string) *remoteError {
	return &remoteError{http.StatusBadRequest, "UnsupportedOperationException", "java.lang.UnsupportedOperationException", op + " is not supported by sluice's read-only HDFS head", ErrUnsupported}
}

// ioError is a plain java.io.IOException: HDFS's web servers answer 403
// to those.
func ioError(class, simple, format string, args ...any) *remoteError {
	return &remoteError{http.StatusForbidden, simple, class, fmt.Sprintf(format, args...), nil}
}

func unavailable(err error) *remoteError {
	return &remoteError{http.StatusServiceUnavailable, "RetriableException", "org.apache.hadoop.ipc.RetriableException", err.Error(), err}
}
