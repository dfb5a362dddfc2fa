// pmem-csi-pause: the pod sandbox ("pause") process of the real-node test tier. The container
// runtime starts it as PID 1 of every pod's sandbox, where it holds the pod's namespaces open.
// It does nothing but wait: SIGINT or SIGTERM end it with status 0, and as PID 1 it reaps every
// orphaned child that is re-parented to it, so no zombie outlives its parent in the pod.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version", "-version":
			fmt.Printf("pmem-csi-pause %s\n", version)
			return
		default:
			fmt.Fprintf(os.Stderr, "pmem-csi-pause takes no arguments except --version (got %q)\n", os.Args[1])
			os.Exit(2)
		}
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reapChildren()
			continue
		}
		os.Exit(0)
	}
}

// reapChildren collects the exit status of every child that has ended, without blocking.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
