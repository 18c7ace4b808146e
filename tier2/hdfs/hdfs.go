package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net"
	"os"
	"os/user"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/tier2"
)

// Options configure a Storage.
type Options struct {
	// NameNodes are the NameNodes' RPC addresses, "host:port"; the client
	// fails over between them.
	NameNodes []string
	// Root is the absolute HDFS directory that holds the storage; New
	// creates it.
	Root string
	// User is the HDFS user the service acts as; "" means
	// $HADOOP_USER_NAME, else the OS user.
	User string
	// Timeout bounds connecting and each read or write on a connection;
	// 0 means DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is Options.Timeout's default.
const DefaultTimeout = 30 * time.Second

// Mode bits of what the backend creates.
const (
	fileMode = 0o444
	dirMode  = 0o755
)

// Storage is a tier2.Storage on HDFS.
type Storage struct {
	c    *hdfs.Client
	root string
	opts Options
}

var _ tier2.Storage = (*Storage)(nil)

// New connects to the NameNode and makes the root directory. An
// unreachable NameNode fails with tier2.ErrUnavailable.
func New(opts Options) (*Storage, error) {
	if len(opts.NameNodes) == 0 {
		return nil, errors.New("hdfs: no NameNode address")
	}
	if !path.IsAbs(opts.Root) || path.Clean(opts.Root) != opts.Root {
		return nil, fmt.Errorf("hdfs: root %q is not a clean absolute path", opts.Root)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.User == "" {
		opts.User = os.Getenv("HADOOP_USER_NAME")
	}
	if opts.User == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("hdfs: no user given and no OS user: %w", err)
		}
		opts.User = u.Username
	}
	dial := deadlineDialer(opts.Timeout)
	c, err := hdfs.NewClient(hdfs.ClientOptions{
		Addresses:        opts.NameNodes,
		User:             opts.User,
		NamenodeDialFunc: dial,
		DatanodeDialFunc: dial,
	})
	if err != nil {
		return nil, fmt.Errorf("hdfs: connect to %v: %w", opts.NameNodes, classify(err))
	}
	s := &Storage{c: c, root: opts.Root, opts: opts}
	if err := c.MkdirAll(opts.Root, dirMode); err != nil {
		c.Close()
		return nil, fmt.Errorf("hdfs: make root %s: %w", opts.Root, classify(err))
	}
	return s, nil
}

// full maps a storage path to its HDFS path.
func (s *Storage) full(p string) string {
	if p == "" {
		return s.root
	}
	return s.root + "/" + p
}

// checkFile validates a path that must name a file (not the root).
func checkFile(p string) error {
	if p == "" {
		return fmt.Errorf("%w: the root is no file", tier2.ErrInvalidPath)
	}
	return tier2.CheckPath(p)
}

// Create implements tier2.Storage.
func (s *Storage) Create(p string) (tier2.Writer, error) {
	if err := checkFile(p); err != nil {
		return nil, err
	}
	if dir := path.Dir(p); dir != "." {
		if err := s.c.MkdirAll(s.full(dir), dirMode); err != nil {
			return nil, s.pathErr("create", p, err)
		}
	}
	defs, err := s.c.ServerDefaults()
	if err != nil {
		return nil, s.pathErr("create", p, err)
	}
	fw, err := s.c.CreateFile(s.full(p), defs.Replication, defs.BlockSize, fileMode)
	if err != nil {
		return nil, s.pathErr("create", p, err)
	}
	return &writer{s: s, p: p, fw: fw}, nil
}

// Open implements tier2.Storage.
func (s *Storage) Open(p string) (tier2.Reader, error) {
	if err := checkFile(p); err != nil {
		return nil, err
	}
	fr, err := s.c.Open(s.full(p))
	if err != nil {
		return nil, s.pathErr("open", p, err)
	}
	if fr.Stat().IsDir() {
		fr.Close()
		return nil, fmt.Errorf("hdfs: open %s: is a directory", p)
	}
	r := &reader{s: s, p: p, fr: fr, size: fr.Stat().Size()}
	if r.size > 0 {
		// Fetch the block locations now, while the path names this file.
		if _, err := fr.ReadAt(make([]byte, 1), 0); err != nil {
			fr.Close()
			return nil, s.pathErr("open", p, err)
		}
	}
	return r, nil
}

// Stat implements tier2.Storage.
func (s *Storage) Stat(p string) (tier2.FileInfo, error) {
	if err := tier2.CheckPath(p); err != nil {
		return tier2.FileInfo{}, err
	}
	fi, err := s.c.Stat(s.full(p))
	if err != nil {
		return tier2.FileInfo{}, s.pathErr("stat", p, err)
	}
	return info(path.Base(s.full(p)), fi), nil
}

func info(name string, fi iofs.FileInfo) tier2.FileInfo {
	return tier2.FileInfo{Name: name, Size: fi.Size(), IsDir: fi.IsDir(), ModTime: fi.ModTime()}
}

// List implements tier2.Storage.
func (s *Storage) List(dir string) ([]tier2.FileInfo, error) {
	if err := tier2.CheckPath(dir); err != nil {
		return nil, err
	}
	fis, err := s.c.ReadDir(s.full(dir))
	if err != nil {
		return nil, s.pathErr("list", dir, err)
	}
	if len(fis) == 0 {
		// ReadDir of a file lists nothing: tell an empty directory
		// from a file.
		fi, err := s.c.Stat(s.full(dir))
		if err != nil {
			return nil, s.pathErr("list", dir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("hdfs: list %s: not a directory", dir)
		}
	}
	out := make([]tier2.FileInfo, len(fis))
	for i, fi := range fis {
		out[i] = info(fi.Name(), fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Rename implements tier2.Storage.
func (s *Storage) Rename(from, to string) error {
	if err := checkFile(from); err != nil {
		return err
	}
	if err := checkFile(to); err != nil {
		return err
	}
	if err := s.c.Rename(s.full(from), s.full(to)); err != nil {
		return fmt.Errorf("hdfs: rename %s to %s: %w", from, to, classify(err))
	}
	return nil
}

// Remove implements tier2.Storage.
func (s *Storage) Remove(p string) error {
	if err := checkFile(p); err != nil {
		return err
	}
	if err := s.c.Remove(s.full(p)); err != nil {
		return s.pathErr("remove", p, err)
	}
	return nil
}

// RemoveAll implements tier2.Storage. RemoveAll("") empties the root and
// keeps it.
func (s *Storage) RemoveAll(p string) error {
	if err := tier2.CheckPath(p); err != nil {
		return err
	}
	if p != "" {
		if err := s.c.RemoveAll(s.full(p)); err != nil {
			return s.pathErr("remove", p, err)
		}
		return nil
	}
	fis, err := s.c.ReadDir(s.root)
	if err != nil {
		return s.pathErr("remove", p, err)
	}
	for _, fi := range fis {
		if err := s.c.RemoveAll(s.full(fi.Name())); err != nil {
			return s.pathErr("remove", fi.Name(), err)
		}
	}
	return nil
}

// Close implements tier2.Storage.
func (s *Storage) Close() error {
	if err := s.c.Close(); err != nil {
		return fmt.Errorf("hdfs: close: %w", classify(err))
	}
	return nil
}

// pathErr wraps err from op on storage path p, classified.
func (s *Storage) pathErr(op, p string, err error) error {
	if p == "" {
		p = "(root)"
	}
	return fmt.Errorf("hdfs: %s %s: %w", op, p, classify(err))
}

// writer is a tier2.Writer. Its first error is sticky.
type writer struct {
	s      *Storage
	p      string
	fw     *hdfs.FileWriter
	err    error
	closed bool
}

func (w *writer) Write(b []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("hdfs: write %s: %w", w.p, iofs.ErrClosed)
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(b) == 0 {
		// The client would allocate a block for no bytes, one that no
		// DataNode ever reports, and the file could never complete.
		return 0, nil
	}
	n, err := w.fw.Write(b)
	if err != nil {
		w.err = w.s.pathErr("write", w.p, err)
		return n, w.err
	}
	return n, nil
}

// Close completes the file. While the NameNode answers that the last
// block has not reached its minimum replication yet, it asks again with a
// growing pause, up to Options.Timeout in all.
func (w *writer) Close() error {
	if w.closed {
		return fmt.Errorf("hdfs: close %s: %w", w.p, iofs.ErrClosed)
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	deadline := time.Now().Add(w.s.opts.Timeout)
	pauses := retry.NewBackoff(50*time.Millisecond, time.Second)
	for {
		err := w.fw.Close()
		if err == nil {
			return nil
		}
		if !hdfs.IsErrReplicating(err) || time.Now().After(deadline) {
			w.err = w.s.pathErr("close", w.p, err)
			return w.err
		}
		time.Sleep(pauses.NextBackOff()) // the NameNode asks its caller to retry later
	}
}

// reader is a tier2.Reader. The client's reader keeps a position, so
// ReadAt calls take turns.
type reader struct {
	s    *Storage
	p    string
	size int64

	mu     sync.Mutex
	fr     *hdfs.FileReader
	closed bool
}

func (r *reader) Size() int64 { return r.size }

func (r *reader) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("hdfs: read %s: negative offset %d", r.p, off)
	}
	if len(b) == 0 {
		return 0, nil
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := b
	if rest := r.size - off; int64(len(b)) > rest {
		want = b[:rest]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, fmt.Errorf("hdfs: read %s: %w", r.p, iofs.ErrClosed)
	}
	n, err := r.fr.ReadAt(want, off)
	if err != nil && !(err == io.EOF && n == len(want)) {
		return n, r.s.pathErr("read", r.p, err)
	}
	if len(want) < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (r *reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("hdfs: close %s: %w", r.p, iofs.ErrClosed)
	}
	r.closed = true
	if err := r.fr.Close(); err != nil {
		return r.s.pathErr("close", r.p, err)
	}
	return nil
}

// deadlineDialer dials with timeout and returns connections that put a
// deadline of timeout on each read and write, so a NameNode or DataNode
// that stops answering fails the call instead of hanging it.
func deadlineDialer(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &deadlineConn{Conn: c, timeout: timeout}, nil
	}
}

type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// The client's own deadlines would replace the per-call ones; they are
// ignored (the per-call deadline is always set).
func (c *deadlineConn) SetDeadline(time.Time) error      { return nil }
func (c *deadlineConn) SetReadDeadline(time.Time) error  { return nil }
func (c *deadlineConn) SetWriteDeadline(time.Time) error { return nil }
