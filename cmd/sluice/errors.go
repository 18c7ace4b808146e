package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
)

// Codes of JSON errors that the CLI gives itself; the others are the
// REST API's (api.CodeNotFound, ...).
const (
	codeUsage       = "USAGE"       // the command line is wrong: a flag, an argument, a command
	codeUnreachable = "UNREACHABLE" // the controller did not answer
)

// usageErr marks an error in how the command was called (a flag, an
// argument, an unknown command): code USAGE in a JSON error.
type usageErr struct{ error }

func (u usageErr) Unwrap() error { return u.error }

// jsonError is the object an error is, on stderr, with --output json.
type jsonError struct {
	Error struct {
		Message string `json:"message"`
		Code    string `json:"code,omitempty"`
	} `json:"error"`
}

// printError prints err once on stderr: one line "sluice: ..." or, with
// --output json, one JSON object.
func printError(stderr io.Writer, format string, err error) {
	if format != formatJSON {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return
	}
	var e jsonError
	e.Error.Message, e.Error.Code = err.Error(), errorCode(err)
	b, merr := json.Marshal(e)
	if merr != nil { // a string and a string: cannot fail
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "%s\n", b)
}

// errorCode classifies err for a JSON error: the REST API's code, USAGE,
// UNREACHABLE, or "" when there is none to give.
func errorCode(err error) string {
	var ce *ctlclient.Error
	var ue usageErr
	switch {
	case errors.As(err, &ue), fromCLI(err):
		return codeUsage
	case errors.As(err, &ce) && ce.Code != "":
		return ce.Code
	case errors.Is(err, ctlclient.ErrUnreachable):
		return codeUnreachable
	}
	return ""
}

// fromCLI says whether err is one urfave/cli made itself, which is always
// about the command line (a required flag missing); the errors of flag
// values and arguments come marked by usageError and args.
func fromCLI(err error) bool {
	t := reflect.TypeOf(err)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && t.PkgPath() == reflect.TypeOf(cli.Context{}).PkgPath()
}
