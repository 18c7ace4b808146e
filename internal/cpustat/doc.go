// Package cpustat reads how the machine's CPUs spent their time, from the
// first line of Linux's /proc/stat: running work (user, nice, system,
// interrupts), idle, idle while waiting for I/O, and stolen.
//
// Steal is the time a virtual machine's CPUs were ready to run but the
// host ran something else: a latency benchmark on a virtual machine can
// lose milliseconds to it while the guest's own load average stays low.
// The benchmarks report it beside their latencies (sluice bench's
// hostCpu and per-second stealPct, the append benchmarks' steal-%) so
// that a slow round can be told from a slow system.
//
// Read takes a sample; Between gives the shares of the time between two
// samples. Neither keeps state, and a sample costs one small file read.
package cpustat
