package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// ServerMemory is the server process's memory after a run
// (Config.ServerPID, Config.ServerPprof).
type ServerMemory struct {
	PID          int   `json:"pid,omitempty"`
	RSSBytes     int64 `json:"rssBytes,omitempty"`     // VmRSS
	PeakRSSBytes int64 `json:"peakRssBytes,omitempty"` // VmHWM: the most since the process started
	// From the Go runtime (after a garbage collection the heap profile
	// asks for): the live heap, the heap spans in use, all memory the
	// runtime holds from the OS, and the goroutines.
	HeapAllocBytes int64 `json:"heapAllocBytes,omitempty"`
	HeapInuseBytes int64 `json:"heapInuseBytes,omitempty"`
	SysBytes       int64 `json:"sysBytes,omitempty"`
	Goroutines     int64 `json:"goroutines,omitempty"`
}

// serverMemory reads what pid and pprofURL give; either may be unset.
func serverMemory(ctx context.Context, pid int, pprofURL string) (*ServerMemory, error) {
	m := &ServerMemory{PID: pid}
	if pid > 0 {
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return nil, fmt.Errorf("--server-pid %d: %w", pid, err)
		}
		defer f.Close()
		kb := map[string]*int64{"VmRSS:": &m.RSSBytes, "VmHWM:": &m.PeakRSSBytes}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 2 && kb[fs[0]] != nil {
				n, _ := strconv.ParseInt(fs[1], 10, 64)
				*kb[fs[0]] = n << 10
			}
		}
		if m.RSSBytes == 0 {
			return nil, fmt.Errorf("--server-pid %d: no VmRSS in /proc/%d/status", pid, pid)
		}
	}
	if pprofURL != "" {
		base := strings.TrimSuffix(pprofURL, "/")
		heap, err := get(ctx, base+"/debug/pprof/heap?debug=1&gc=1")
		if err != nil {
			return nil, fmt.Errorf("--server-pprof: %w", err)
		}
		vals := map[string]*int64{"HeapAlloc": &m.HeapAllocBytes, "HeapInuse": &m.HeapInuseBytes, "Sys": &m.SysBytes}
		for _, line := range strings.Split(heap, "\n") {
			// "# HeapAlloc = 123"
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
			if p := vals[k]; ok && p != nil && strings.HasPrefix(line, "# ") {
				*p, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
		if m.HeapAllocBytes == 0 {
			return nil, fmt.Errorf("--server-pprof %s: the heap profile has no HeapAlloc line", pprofURL)
		}
		gr, err := get(ctx, base+"/debug/pprof/goroutine?debug=1")
		if err != nil {
			return nil, fmt.Errorf("--server-pprof: %w", err)
		}
		// "goroutine profile: total 42"
		first, _, _ := strings.Cut(gr, "\n")
		if _, n, ok := strings.Cut(first, "total "); ok {
			m.Goroutines, _ = strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		}
	}
	return m, nil
}

func get(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}
