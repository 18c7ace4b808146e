package hadooptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// mainClass is the harness's entry point (harness/src/main/java).
const mainClass = "org.sluice.hadooptest.Harness"

// jvmFlags keep a harness JVM small and quick to start: tests need
// neither a big heap nor the optimising compiler.
var jvmFlags = []string{
	"-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
	"-Djava.net.preferIPv4Stack=true",
}

// Runner starts harness JVMs.
type Runner struct {
	// Java is the java binary.
	Java string
	// Classpath is the harness's classes followed by its dependencies.
	Classpath string
}

// Command returns a command that runs the harness with args.
func (r *Runner) Command(args ...string) *exec.Cmd {
	argv := append(append([]string{}, jvmFlags...), "-cp", r.Classpath, mainClass)
	return exec.Command(r.Java, append(argv, args...)...)
}

// Class returns a command that runs another main class of the harness's
// classpath with args: Hadoop's own tools, e.g.
// "org.apache.hadoop.fs.FsShell" with "-ls", "hdfs://HOST:PORT/".
func (r *Runner) Class(main string, args ...string) *exec.Cmd {
	argv := append(append([]string{}, jvmFlags...), "-cp", r.Classpath, main)
	return exec.Command(r.Java, append(argv, args...)...)
}

// HarnessDir is the harness's Maven project (tier2/hadooptest/harness).
func HarnessDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "harness")
}

// Harness returns the built harness, failing t (never skipping) with what
// to do when it or java is missing.
func Harness(t testing.TB) *Runner {
	t.Helper()
	r, err := FindHarness()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// FindHarness is Harness for callers without a t (TestMain).
func FindHarness() (*Runner, error) {
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	java, err := exec.LookPath(java)
	if err != nil {
		return nil, errors.New("hadooptest: java not found ($JAVA_HOME/bin or PATH); run scripts/test-deps.sh (make test does)")
	}
	target := filepath.Join(HarnessDir(), "target")
	classes := filepath.Join(target, "classes")
	if _, err := os.Stat(filepath.Join(classes, filepath.FromSlash(strings.ReplaceAll(mainClass, ".", "/"))+".class")); err != nil {
		return nil, fmt.Errorf("hadooptest: the Hadoop harness is not built (%v); run `make harness` (make test does)", err)
	}
	cp, err := os.ReadFile(filepath.Join(target, "classpath.txt"))
	if err != nil {
		return nil, fmt.Errorf("hadooptest: the Hadoop harness's classpath is missing (%v); run `make harness`", err)
	}
	deps := strings.TrimSpace(string(cp))
	for _, jar := range filepath.SplitList(deps) {
		if _, err := os.Stat(jar); err != nil {
			return nil, fmt.Errorf("hadooptest: a jar of the Hadoop harness is gone (%v); run `make -B harness`", err)
		}
	}
	return &Runner{Java: java, Classpath: classes + string(filepath.ListSeparator) + deps}, nil
}
