package main

import (
	"strings"
	"testing"
)

// TestExecutorErrors: `sluice executor` outside a Mesos agent, or with a
// bad command line, fails with one clear line. (The executor itself is
// tested against the fake agent in package executor.)
func TestExecutorErrors(t *testing.T) {
	for _, v := range []string{"MESOS_FRAMEWORK_ID", "MESOS_EXECUTOR_ID", "MESOS_DIRECTORY", "MESOS_SANDBOX", "MESOS_AGENT_ENDPOINT", "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD"} {
		t.Setenv(v, "")
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"executor", "--", "node"}, `"role" not set`},
		{[]string{"executor", "--role", "kafka", "--", "kafka"}, `--role "kafka": want node, controller, hdfs-gateway, nfs-export or s3-gateway`},
		{[]string{"executor", "--role", "node"}, "no role arguments after --"},
		{[]string{"executor", "--role", "node", "--", "node", "--data", "x"}, "missing environment variable: MESOS_AGENT_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			oneErrorLine(t, stderr, tt.want)
		})
	}
}
