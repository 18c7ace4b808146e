package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts a CPU profile of this process into cpuFile and an
// execution trace into traceFile (either "": none), for `sluice bench`'s
// hidden --cpuprofile and --trace: they show the benchmark's own share of
// what it measures (pacing, the acknowledgement goroutines, GC). The
// returned stop ends both and closes the files.
func startProfiles(cpuFile, traceFile string) (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		stops = nil
		return errors.Join(errs...)
	}
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err != nil {
			stop()
			return nil, fmt.Errorf("--trace: %w", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return nil, fmt.Errorf("--trace: %w", err)
		}
		stops = append(stops, func() error { trace.Stop(); return f.Close() })
	}
	return stop, nil
}
