package rest

import "net/http"

// route is one served method and path. Pattern is both a net/http.ServeMux
// pattern (without the method) and an OpenAPI path: the wildcards are the
// same {name} in both.
type route struct {
	Method  string
	Pattern string
	serve   func(h *handler, r *http.Request) (status int, body any, err error)
}

// routes is what the handler serves; docs/openapi.yaml documents exactly
// these (TestOpenAPIMatchesRoutes).
var routes = []route{
	{"GET", "/health", (*handler).health},

	{"POST", "/v1/scopes", (*handler).createScope},
	{"GET", "/v1/scopes", (*handler).listScopes},
	{"GET", "/v1/scopes/{scope}", (*handler).getScope},
	{"DELETE", "/v1/scopes/{scope}", (*handler).deleteScope},

	{"POST", "/v1/scopes/{scope}/streams", (*handler).createStream},
	{"GET", "/v1/scopes/{scope}/streams", (*handler).listStreams},
	{"GET", "/v1/scopes/{scope}/streams/{stream}", (*handler).getStream},
	{"PUT", "/v1/scopes/{scope}/streams/{stream}", (*handler).updateStream},
	{"DELETE", "/v1/scopes/{scope}/streams/{stream}", (*handler).deleteStream},
	{"PUT", "/v1/scopes/{scope}/streams/{stream}/state", (*handler).setState},
	{"POST", "/v1/scopes/{scope}/streams/{stream}/scale", (*handler).scale},
	{"POST", "/v1/scopes/{scope}/streams/{stream}/truncate", (*handler).truncate},

	{"GET", "/v1/scopes/{scope}/streams/{stream}/segments", (*handler).segments},
	{"GET", "/v1/scopes/{scope}/streams/{stream}/head", (*handler).head},
	{"POST", "/v1/scopes/{scope}/streams/{stream}/segments-between", (*handler).segmentsBetween},
	{"GET", "/v1/segments/{segment}", (*handler).segmentRange},
	{"GET", "/v1/segments/{segment}/successors", (*handler).successors},

	{"POST", "/v1/scopes/{scope}/streams/{stream}/transactions", (*handler).createTxn},
	{"GET", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}", (*handler).getTxn},
	{"DELETE", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}", (*handler).abortTxn},
	{"POST", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}/ping", (*handler).pingTxn},
	{"POST", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}/commit", (*handler).commitTxn},
}
