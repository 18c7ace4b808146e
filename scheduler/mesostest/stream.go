package mesostest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
)

// message is what both event streams carry: a scheduler.Event or an
// executor.Event, each able to marshal itself as protobuf and as JSON.
type message interface {
	Marshal() ([]byte, error)
}

// stream is one open RecordIO event stream. The master queues events
// without blocking; the handler goroutine that owns the HTTP response
// writes them in order until the stream is closed or the client goes.
type stream struct {
	id     string
	notify chan struct{} // capacity 1: "the queue has grown"
	done   chan struct{} // closed by close()

	mu struct {
		sync.Mutex
		queue  []message
		closed bool
	}
}

func newStream(id string) *stream {
	return &stream{id: id, notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues ev; it never blocks. Events sent after close are dropped.
func (s *stream) send(ev message) {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return
	}
	s.mu.queue = append(s.mu.queue, ev)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// close ends the stream: the handler stops writing and returns, which
// ends the HTTP response.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.mu.closed {
		s.mu.closed = true
		close(s.done)
	}
}

func (s *stream) take() []message {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.mu.queue
	s.mu.queue = nil
	return q
}

// serve writes the stream's events as RecordIO records until the stream
// is closed, the request's context ends or a write fails. It calls
// onEnd (if not nil) once it returns for any reason but close.
func (s *stream) serve(w http.ResponseWriter, r *http.Request, enc wireFormat, onEnd func()) {
	enc.writeStreamHeaders(w)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	for {
		for _, ev := range s.take() {
			b, err := enc.marshal(ev)
			if err == nil {
				_, err = fmt.Fprintf(w, "%d\n%s", len(b), b)
			}
			if err != nil {
				if onEnd != nil {
					onEnd()
				}
				return
			}
		}
		if fl != nil {
			fl.Flush()
		}
		select {
		case <-s.notify:
		case <-s.done:
			return
		case <-r.Context().Done():
			if onEnd != nil {
				onEnd()
			}
			return
		}
	}
}

// wireFormat is the encoding of one request and of the response to it.
type wireFormat struct {
	// json is true for application/json, false for application/x-protobuf.
	json bool
	// recordioType is true when the client asked for
	// "Accept: application/recordio" (Mesos 1.2 and later); the stream
	// is then labelled application/recordio with the message type in
	// Message-Content-Type. Otherwise the stream is labelled with the
	// message type itself, as Mesos did before 1.2 and still does for
	// clients that accept only the message type.
	recordioType bool
}

const mediaRecordIO = "application/recordio"

func (f wireFormat) mediaType() string {
	if f.json {
		return string(codecs.MediaTypeJSON)
	}
	return string(codecs.MediaTypeProtobuf)
}

func (f wireFormat) writeStreamHeaders(w http.ResponseWriter) {
	if f.recordioType {
		w.Header().Set("Content-Type", mediaRecordIO)
		w.Header().Set("Message-Content-Type", f.mediaType())
	} else {
		w.Header().Set("Content-Type", f.mediaType())
	}
	w.Header().Set("Cache-Control", "no-cache")
}

func (f wireFormat) marshal(m message) ([]byte, error) {
	if f.json {
		return json.Marshal(m)
	}
	return m.Marshal()
}

func (f wireFormat) unmarshal(b []byte, v interface {
	Unmarshal([]byte) error
}) error {
	if f.json {
		return json.Unmarshal(b, v)
	}
	return v.Unmarshal(b)
}

// readCall checks that r is a POST, negotiates its encodings and decodes
// its body into call, answering the request itself (405, 406 or 400) and
// returning false when it cannot, as the master and agent do.
func readCall(w http.ResponseWriter, r *http.Request, call interface {
	Unmarshal([]byte) error
}) (in, out wireFormat, ok bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Expecting 'POST'", http.StatusMethodNotAllowed)
		return in, out, false
	}
	in, out, err := negotiate(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotAcceptable)
		return in, out, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return in, out, false
	}
	if err := in.unmarshal(body, call); err != nil {
		http.Error(w, "Failed to parse body: "+err.Error(), http.StatusBadRequest)
		return in, out, false
	}
	return in, out, true
}

// negotiate reads the request's Content-Type (the call's encoding) and
// Accept / Message-Accept (the response's). A response is encoded like
// the request unless the client asks otherwise.
func negotiate(r *http.Request) (in, out wireFormat, err error) {
	switch ct := mediaOf(r.Header.Get("Content-Type")); ct {
	case string(codecs.MediaTypeJSON):
		in.json = true
	case string(codecs.MediaTypeProtobuf):
	default:
		return in, out, fmt.Errorf("%w: Content-Type %q", ErrMediaType, ct)
	}
	out = in
	accept := mediaOf(r.Header.Get("Accept"))
	switch accept {
	case "", "*/*":
	case string(codecs.MediaTypeJSON):
		out.json = true
	case string(codecs.MediaTypeProtobuf):
		out.json = false
	case mediaRecordIO:
		out.recordioType = true
		switch mediaOf(r.Header.Get("Message-Accept")) {
		case string(codecs.MediaTypeJSON):
			out.json = true
		case string(codecs.MediaTypeProtobuf):
			out.json = false
		}
	default:
		return in, out, fmt.Errorf("%w: Accept %q", ErrMediaType, accept)
	}
	return in, out, nil
}

func mediaOf(h string) string {
	for i := 0; i < len(h); i++ {
		if h[i] == ';' || h[i] == ',' {
			h = h[:i]
			break
		}
	}
	for len(h) > 0 && h[len(h)-1] == ' ' {
		h = h[:len(h)-1]
	}
	return h
}

func itoa(n int) string { return strconv.Itoa(n) }
