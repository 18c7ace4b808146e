package mesostest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// TestFetchURIs: a task's CommandInfo URIs are in its sandbox before the
// command runs, as Mesos' fetcher puts them (under the last path segment
// or output_file; executable when asked); a URI that cannot be fetched
// fails the launch with TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED and a
// message naming it, as in Mesos.
func TestFetchURIs(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024}); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	site := filepath.Join(src, "hdfs-site.xml")
	if err := os.WriteFile(site, []byte("<configuration/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(src, "tool.sh")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho tool ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeJSON)
	yes := true
	launch := func(id, cmd string, uris ...mesos.CommandInfo_URI) {
		o := s.nextOffer(func(mesos.Offer) bool { return true })
		ti := mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
			Resources: []mesos.Resource{scalar("cpus", 1)},
			Command:   &mesos.CommandInfo{Value: strPtr(cmd), URIs: uris}}
		s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	}

	launch("fetched", `cat conf/site.xml hdfs-site.xml > out.txt && ./tool.sh >> out.txt`,
		mesos.CommandInfo_URI{Value: "file://" + site, OutputFile: strPtr("conf/site.xml")},
		mesos.CommandInfo_URI{Value: site},
		mesos.CommandInfo_URI{Value: tool, Executable: &yes})
	s.update("fetched", mesos.TASK_RUNNING)
	tv, ok := m.Task("fetched")
	if !ok {
		t.Fatal("task fetched is gone before its FINISHED was acknowledged")
	}
	if st := s.update("fetched", mesos.TASK_FINISHED); st.GetState() != mesos.TASK_FINISHED {
		t.Fatalf("fetched: %+v", st)
	}
	if b, err := os.ReadFile(filepath.Join(tv.Sandbox, "out.txt")); err != nil || string(b) != "<configuration/><configuration/>tool ran\n" {
		t.Fatalf("the task saw %q, %v", b, err)
	}

	for _, c := range []struct {
		id   string
		uri  mesos.CommandInfo_URI
		want string
	}{
		{"missing", mesos.CommandInfo_URI{Value: filepath.Join(src, "absent.xml")}, "absent.xml"},
		{"remote", mesos.CommandInfo_URI{Value: "http://127.0.0.1:1/hdfs-site.xml"}, "only local files"},
		{"archive", mesos.CommandInfo_URI{Value: site, OutputFile: strPtr("s.tar.gz"), Extract: &yes}, "does not extract"},
		{"escape", mesos.CommandInfo_URI{Value: site, OutputFile: strPtr("../out.xml")}, "leaves the sandbox"},
	} {
		launch(c.id, "true", c.uri)
		st := s.update(c.id, mesos.TASK_FAILED)
		if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), "Failed to fetch") || !strings.Contains(st.GetMessage(), c.want) {
			t.Errorf("%s: %+v, want TASK_FAILED (container launch failed) saying %q", c.id, st, c.want)
		}
	}
}
