//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without blocking on a FIFO with no writer: the
// file's type is checked before anything is read from it. (O_NONBLOCK changes nothing
// for the regular files that pass that check.)
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
