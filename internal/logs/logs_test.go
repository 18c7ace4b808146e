package logs

import (
	"bytes"
	"io"
	"testing"

	"github.com/sirupsen/logrus"
)

func TestOrDiscardKeepsAGivenLogger(t *testing.T) {
	var buf bytes.Buffer
	given := logrus.New()
	given.SetOutput(&buf)
	l := OrDiscard(given)
	l.WithField("k", "v").Warn("kept")
	if !bytes.Contains(buf.Bytes(), []byte("kept")) {
		t.Fatalf("the given logger did not receive the entry; got %q", buf.String())
	}
}

func TestOrDiscardOfNilWritesNothing(t *testing.T) {
	l, ok := OrDiscard(nil).(*logrus.Logger)
	if !ok {
		t.Fatalf("OrDiscard(nil) is %T, want *logrus.Logger", OrDiscard(nil))
	}
	if l.Out != io.Discard {
		t.Fatalf("OrDiscard(nil) writes to %T, want io.Discard", l.Out)
	}
	for _, lv := range []logrus.Level{logrus.ErrorLevel, logrus.WarnLevel, logrus.InfoLevel, logrus.DebugLevel} {
		if l.IsLevelEnabled(lv) {
			t.Fatalf("OrDiscard(nil) has level %v enabled", lv)
		}
	}
	l.WithError(io.EOF).Error("dropped") // must not panic
}
