//go:build unix

package metrics

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user + system) this process has used so far: the client's
// own cost, which results report per operation. 0 where it cannot be read.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
