package rest

import "net/http"

// Route is one served method and path. Pattern is both a net/http.ServeMux
// pattern (without the method) and an OpenAPI path: the wildcards are the
// same {name} in both.
type Route struct {
	Method  string
	Pattern string
}

// Routes returns every route the handler serves, in the order of the
// package documentation.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = rt.Route
	}
	return out
}

type route struct {
	Route
	serve func(h *handler, r *http.Request) (status int, body any, err error)
}

// routes is what the handler serves; docs/openapi.yaml documents exactly
// these (TestOpenAPIMatchesRoutes).
var routes = []route{
	{Route{"GET", "/health"}, (*handler).health},

	{Route{"POST", "/v1/scopes"}, (*handler).createScope},
	{Route{"GET", "/v1/scopes"}, (*handler).listScopes},
	{Route{"GET", "/v1/scopes/{scope}"}, (*handler).getScope},
	{Route{"DELETE", "/v1/scopes/{scope}"}, (*handler).deleteScope},

	{Route{"POST", "/v1/scopes/{scope}/streams"}, (*handler).createStream},
	{Route{"GET", "/v1/scopes/{scope}/streams"}, (*handler).listStreams},
	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}"}, (*handler).getStream},
	{Route{"PUT", "/v1/scopes/{scope}/streams/{stream}"}, (*handler).updateStream},
	{Route{"DELETE", "/v1/scopes/{scope}/streams/{stream}"}, (*handler).deleteStream},
	{Route{"PUT", "/v1/scopes/{scope}/streams/{stream}/state"}, (*handler).setState},
	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/scale"}, (*handler).scale},
	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/truncate"}, (*handler).truncate},

	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}/segments"}, (*handler).segments},
	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}/head"}, (*handler).head},
	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}/scaling-events"}, (*handler).scalingEvents},
	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/segments-between"}, (*handler).segmentsBetween},
	{Route{"GET", "/v1/segments/{segment}"}, (*handler).segmentRange},
	{Route{"GET", "/v1/segments/{segment}/successors"}, (*handler).successors},
	{Route{"GET", "/v1/segments/{segment}/uri"}, (*handler).segmentURI},
	{Route{"GET", "/v1/tier2"}, (*handler).tier2},
	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}/tier"}, (*handler).streamTier},
	{Route{"GET", "/v1/nodes/tier"}, (*handler).nodeTiers},
	{Route{"GET", "/v1/nodes"}, (*handler).nodes},
	{Route{"PUT", "/v1/nodes/{node}/drain"}, (*handler).drain},

	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/transactions"}, (*handler).createTxn},
	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}"}, (*handler).getTxn},
	{Route{"DELETE", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}"}, (*handler).abortTxn},
	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}/ping"}, (*handler).pingTxn},
	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/transactions/{id}/commit"}, (*handler).commitTxn},

	{Route{"POST", "/v1/scopes/{scope}/streams/{stream}/writers/{writer}/time"}, (*handler).noteWriterTime},
	{Route{"DELETE", "/v1/scopes/{scope}/streams/{stream}/writers/{writer}"}, (*handler).removeWriter},
	{Route{"GET", "/v1/scopes/{scope}/streams/{stream}/watermarks"}, (*handler).watermarks},

	{Route{"POST", "/v1/scopes/{scope}/readergroups"}, (*handler).createReaderGroup},
	{Route{"GET", "/v1/scopes/{scope}/readergroups"}, (*handler).listReaderGroups},
	{Route{"GET", "/v1/scopes/{scope}/readergroups/{group}"}, (*handler).getReaderGroup},
	{Route{"DELETE", "/v1/scopes/{scope}/readergroups/{group}"}, (*handler).deleteReaderGroup},
	{Route{"PUT", "/v1/scopes/{scope}/readergroups/{group}/state"}, (*handler).updateReaderGroupState},
}
