//go:build !unix

package inputfile

import (
	"fmt"
	"os"
)

// openNonBlocking checks the file's type before opening it (no O_NONBLOCK here).
func openNonBlocking(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", modeName(st.Mode()))
	}
	return os.Open(path)
}
