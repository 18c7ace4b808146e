package s3gateway

import (
	"encoding/xml"
	"errors"
	"net/http"

	"github.com/sluice-streams/sluice/s3gateway/sigv4"
	"github.com/sluice-streams/sluice/tier2/view"
)

// ReadOnlyMessage is AccessDenied's message for every write.
const ReadOnlyMessage = "Access Denied: sluice's S3 head serves tier 2 read-only; it accepts no writes."

// s3Error is one S3 error answer.
type s3Error struct {
	status int
	code   string
	msg    string
	region string // AuthorizationHeaderMalformed's expected region
}

func (e *s3Error) Error() string { return e.code + ": " + e.msg }

func errorf(status int, code, msg string) *s3Error {
	return &s3Error{status: status, code: code, msg: msg}
}

var (
	errAccessDenied   = errorf(http.StatusForbidden, "AccessDenied", ReadOnlyMessage)
	errAnonymous      = errorf(http.StatusForbidden, "AccessDenied", "Access Denied: anonymous requests are not served; sign them with AWS Signature Version 4.")
	errAnonOverrides  = errorf(http.StatusBadRequest, "InvalidRequest", "Request specific response headers cannot be used for anonymous GET requests.")
	errNoSuchBucket   = errorf(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
	errNoSuchKey      = errorf(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
	errMethod         = errorf(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
	errPrecondition   = errorf(http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	errInvalidRange   = errorf(http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable")
	errUnavailable    = errorf(http.StatusServiceUnavailable, "ServiceUnavailable", "Tier 2 or the controller is unavailable now; retry.")
	errInternal       = errorf(http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
	errBadToken       = errorf(http.StatusBadRequest, "InvalidArgument", "The continuation token provided is incorrect")
	errKeyTooLong     = errorf(http.StatusBadRequest, "KeyTooLongError", "Your key is too long")
	errURITooLong     = errorf(http.StatusBadRequest, "InvalidURI", "Couldn't parse the specified URI: the query is too long.")
	errPayloadHash    = errorf(http.StatusBadRequest, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.")
	errReadBody       = errorf(http.StatusBadRequest, "InvalidRequest", "A read request may not carry a body.")
	errNotImplemented = func(what string) *s3Error {
		return errorf(http.StatusNotImplemented, "NotImplemented", "A header or query you provided implies functionality that is not implemented: "+what+". The S3 head serves ListBuckets, HeadBucket, GetBucketLocation, GetBucketVersioning, ListObjects (V1 and V2), HeadObject and GetObject.")
	}
	errInvalidArgument = func(msg string) *s3Error { return errorf(http.StatusBadRequest, "InvalidArgument", msg) }
)

// authError maps a sigv4 error to S3's.
func authError(err error, region string) *s3Error {
	msg := err.Error()
	switch {
	case errors.Is(err, sigv4.ErrUnknownKey):
		return errorf(http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
	case errors.Is(err, sigv4.ErrSignature):
		return errorf(http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	case errors.Is(err, sigv4.ErrSkewed):
		return errorf(http.StatusForbidden, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large.")
	case errors.Is(err, sigv4.ErrExpired):
		return errorf(http.StatusForbidden, "AccessDenied", "Request has expired: "+msg)
	case errors.Is(err, sigv4.ErrWrongRegion):
		e := errorf(http.StatusBadRequest, "AuthorizationHeaderMalformed", "The authorization header is malformed; "+msg)
		e.region = region
		return e
	case errors.Is(err, sigv4.ErrUnsupported):
		return errorf(http.StatusBadRequest, "InvalidRequest", "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.")
	default:
		return errorf(http.StatusBadRequest, "AuthorizationHeaderMalformed", "The authorization header is malformed; "+msg)
	}
}

// viewError maps a view error to S3's: missing paths to notFound.
func viewError(err error, notFound *s3Error) *s3Error {
	switch {
	case errors.Is(err, view.ErrNotExist), errors.Is(err, view.ErrNotDir), errors.Is(err, view.ErrIsDir):
		return notFound
	case errors.Is(err, view.ErrUnavailable):
		return errUnavailable
	default:
		return errInternal
	}
}

type errorXML struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	Region     string   `xml:"Region,omitempty"`
	Resource   string   `xml:"Resource"`
	RequestID  string   `xml:"RequestId"`
}

// writeError answers e; a HEAD gets the status alone, as from S3.
func writeError(w http.ResponseWriter, r *http.Request, rq *request, e *s3Error) {
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(e.status)
		return
	}
	body := errorXML{Code: e.code, Message: e.msg, Region: e.region, Resource: r.URL.Path, RequestID: rq.id}
	if e == errNoSuchBucket || e == errNoSuchKey {
		body.BucketName = rq.bucket
	}
	if e == errNoSuchKey {
		body.Key = rq.key
	}
	writeXML(w, e.status, body)
}

// writeXML answers v as XML with status.
func writeXML(w http.ResponseWriter, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write([]byte(xml.Header))
	w.Write(out)
}
