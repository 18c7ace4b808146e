package datanode

import "syscall"

// errEMFILE is accept's "too many open files": transient, retried.
var errEMFILE error = syscall.EMFILE
