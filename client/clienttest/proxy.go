package clienttest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a loopback TCP proxy in front of a node that a test can freeze:
// once frozen it forwards no byte in either direction and answers no new
// connection, but closes nothing, like a node stopped with SIGSTOP (the
// kernel still accepts connections and takes bytes until its buffers
// fill). Freezing cannot be undone; Close (at the end of the test) ends
// every connection.
type Proxy struct {
	l      net.Listener
	target string

	frozen    chan struct{} // closed by Freeze
	closed    chan struct{} // closed by Close
	freezeOne sync.Once
	closeOne  sync.Once
	wg        sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

// NewProxy listens on a free loopback port and forwards every connection
// to target. It is closed at the end of the test.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{l: l, target: target, frozen: make(chan struct{}), closed: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Freeze stops all forwarding, now and for good.
func (p *Proxy) Freeze() { p.freezeOne.Do(func() { close(p.frozen) }) }

// Close ends the listener and every connection, and waits for the
// proxy's goroutines.
func (p *Proxy) Close() {
	p.closeOne.Do(func() {
		close(p.closed)
		p.l.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
		p.mu.Unlock()
	})
	p.wg.Wait()
}

// track keeps c to close it with the proxy; false if the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
		c.Close()
		return false
	default:
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve connects c to the target unless frozen first, then pumps both
// ways.
func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	if !p.open() {
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(up) {
		return
	}
	p.wg.Add(2)
	go p.pump(up, c)
	go p.pump(c, up)
}

// open reports whether forwarding may go on: false once frozen (after
// waiting for Close) or closed.
func (p *Proxy) open() bool {
	select {
	case <-p.frozen:
		<-p.closed
		return false
	case <-p.closed:
		return false
	default:
		return true
	}
}

// pump copies src to dst until either ends; frozen, it holds what it read
// and stops reading.
func (p *Proxy) pump(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.open() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
			}
			return
		}
	}
}
