package swarm

import (
	"fmt"
	"syscall"
)

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard limit and checks that `need`
// descriptors fit.
func raiseFileLimit(need uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit: %w", err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, fmt.Errorf("setrlimit: %w", err)
		}
	}
	if lim.Cur < need {
		return lim.Cur, fmt.Errorf("-nodes needs about %d file descriptors; RLIMIT_NOFILE is %d", need, lim.Cur)
	}
	return lim.Cur, nil
}
