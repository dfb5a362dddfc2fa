package swarm

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"pmem-csi.local/bench/internal/mtls"
)

type config struct {
	registry, registrySAN, controllerSAN, prefix, driverName string
	nodes                                                    int
	inventory                                                bool
	capacity                                                 int64
	duration, callTimeout                                    time.Duration
	tls                                                      mtls.Files
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	fs.StringVar(&c.registry, "registry", "", "host:port of the controller's registry (mutual TLS)")
	fs.IntVar(&c.nodes, "nodes", 10, "fake nodes to register, each with its own node-controller port")
	fs.StringVar(&c.registrySAN, "registry-san", "pmem-registry", "DNS SAN the registry's certificate must have")
	fs.StringVar(&c.controllerSAN, "controller-san", "pmem-registry", "DNS SAN the controller's client certificate must have (node-controller services)")
	fs.StringVar(&c.prefix, "prefix", "swarm", "node ids are <prefix>-<n>")
	fs.StringVar(&c.driverName, "driver-name", "pmem-csi.intel.com", "CSI driver name (topology key <name>/node)")
	fs.Int64Var(&c.capacity, "capacity", 64<<30, "PMEM bytes of each fake node")
	fs.BoolVar(&c.inventory, "inventory", true, "send the node's volumes with each registration (registry.proto field 6), as current node drivers do; false: the controller lists them")
	fs.DurationVar(&c.duration, "duration", 2*time.Minute, "stop by itself after this long")
	fs.DurationVar(&c.callTimeout, "call-timeout", 30*time.Second, "deadline of each registry call")
	c.tls.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var problems []error
	bad := func(format string, a ...any) { problems = append(problems, fmt.Errorf(format, a...)) }
	if c.registry == "" {
		bad("-registry is required")
	}
	if !c.tls.Set() {
		bad("-ca, -cert and -key are required (a node-controller certificate)")
	}
	if c.nodes < 1 || c.nodes > 10000 {
		bad("-nodes %d must be in 1..10000", c.nodes)
	}
	if c.capacity < 1<<20 {
		bad("-capacity %d must be at least 1 MiB", c.capacity)
	}
	if c.duration <= 0 || c.callTimeout <= 0 {
		bad("-duration and -call-timeout must be positive")
	}
	return c, errors.Join(problems...)
}
