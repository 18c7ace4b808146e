package logs

import (
	"io"

	"github.com/sirupsen/logrus"
)

// OrDiscard returns l, or a logger that discards everything if l is nil.
func OrDiscard(l logrus.FieldLogger) logrus.FieldLogger {
	if l == nil {
		return Discard()
	}
	return l
}

// Discard returns a logger that writes nothing. Its level is Panic, so
// that entries below it are not even formatted; Panic and Fatal still
// panic and exit, as with any logrus logger.
func Discard() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetLevel(logrus.PanicLevel)
	return l
}
