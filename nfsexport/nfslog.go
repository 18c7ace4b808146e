package nfsexport

import (
	"sync"

	"github.com/sirupsen/logrus"
	nfs "github.com/willscott/go-nfs"
)

// go-nfs logs through one process-wide logger (nfs.Log), by default to
// the standard log at level Info. Its messages are about calls the gate
// has let through and connections ending (a reply that could not be sent
// after Close): useful when debugging, noise otherwise. The first New
// sends them to logrus's standard logger at level Debug.
var quietNFSLog sync.Once

func quietNFS() { quietNFSLog.Do(func() { nfs.SetLogger(nfsLogger{}) }) }

// nfsLogger is nfs.Logger over logrus's standard logger, at Debug.
type nfsLogger struct{}

func (nfsLogger) log() *logrus.Entry { return logrus.StandardLogger().WithField("from", "go-nfs") }

func (nfsLogger) SetLevel(nfs.LogLevel)                   {}
func (nfsLogger) GetLevel() nfs.LogLevel                  { return nfs.DebugLevel }
func (nfsLogger) ParseLevel(string) (nfs.LogLevel, error) { return nfs.DebugLevel, nil }

func (l nfsLogger) Panic(args ...any)                 { l.log().Debug(args...) }
func (l nfsLogger) Fatal(args ...any)                 { l.log().Debug(args...) }
func (l nfsLogger) Error(args ...any)                 { l.log().Debug(args...) }
func (l nfsLogger) Warn(args ...any)                  { l.log().Debug(args...) }
func (l nfsLogger) Info(args ...any)                  { l.log().Debug(args...) }
func (l nfsLogger) Debug(args ...any)                 { l.log().Debug(args...) }
func (l nfsLogger) Trace(args ...any)                 { l.log().Trace(args...) }
func (l nfsLogger) Print(args ...any)                 { l.log().Debug(args...) }
func (l nfsLogger) Panicf(format string, args ...any) { l.log().Debugf(format, args...) }
func (l nfsLogger) Fatalf(format string, args ...any) { l.log().Debugf(format, args...) }
func (l nfsLogger) Errorf(format string, args ...any) { l.log().Debugf(format, args...) }
func (l nfsLogger) Warnf(format string, args ...any)  { l.log().Debugf(format, args...) }
func (l nfsLogger) Infof(format string, args ...any)  { l.log().Debugf(format, args...) }
func (l nfsLogger) Debugf(format string, args ...any) { l.log().Debugf(format, args...) }
func (l nfsLogger) Tracef(format string, args ...any) { l.log().Tracef(format, args...) }
func (l nfsLogger) Printf(format string, args ...any) { l.log().Debugf(format, args...) }
