// Command pmem-csi-bench holds the Go side of the PMEM-CSI benchmarks (e2e/src/bench):
//
//	pmem-csi-bench refcsi -unix unix:///path [-tcp 127.0.0.1:0 -ca F -cert F -key F]
//	pmem-csi-bench load -target T -op pairs|info|probe|lifecycle|first-probe [-c N] [-duration D|-count K]
//	pmem-csi-bench swarm -registry 127.0.0.1:PORT -nodes N -ca F -cert F -key F [-duration D]
//	pmem-csi-bench --version
//
// Each subcommand prints JSON lines on stdout and stops by itself; -h lists its flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"pmem-csi.local/bench/internal/load"
	"pmem-csi.local/bench/internal/refcsi"
	"pmem-csi.local/bench/internal/swarm"
)

// version is set at build time (-ldflags "-X main.version=...") to the hash of the sources.
var version = "dev"

const usage = `usage: pmem-csi-bench refcsi|load|swarm [flags]   (-h after a subcommand lists its flags)
       pmem-csi-bench --version`

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "refcsi":
		return refcsi.Run(args[1:], version)
	case "load":
		return load.Run(args[1:])
	case "swarm":
		return swarm.Run(args[1:])
	case "--version", "-version", "version":
		fmt.Println("pmem-csi-bench", version)
		return nil
	}
	return fmt.Errorf("unknown subcommand %q\n%s", args[0], usage)
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "pmem-csi-bench:", err)
		os.Exit(2)
	}
}
