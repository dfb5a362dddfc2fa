package load

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"

	"pmem-csi.local/bench/internal/mtls"
)

// Ops are the values of -op.
var Ops = []string{"pairs", "info", "probe", "lifecycle", "first-probe"}

type config struct {
	op, target, serverName, prefix, nodeTarget, dir, fsType string
	concurrency, conns                                      int
	count                                                   int64
	duration, waitReady, callTimeout                        time.Duration
	size                                                    int64
	since                                                   int64
	tls                                                     mtls.Files
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&c.op, "op", "pairs", fmt.Sprintf("what each worker repeats, one of %v", Ops))
	fs.StringVar(&c.target, "target", "", "endpoint: unix:///path (plain) or 127.0.0.1:PORT (with -ca/-cert/-key)")
	fs.StringVar(&c.serverName, "server-name", "pmem-node-controller", "DNS SAN the TLS server must present")
	fs.IntVar(&c.concurrency, "c", 1, "concurrent workers")
	fs.IntVar(&c.conns, "conns", 1, "client connections the workers share (round robin)")
	fs.Int64Var(&c.count, "count", 0, "stop after this many operations (pairs, calls, lifecycles); 0 = use -duration")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to run when -count is 0")
	fs.DurationVar(&c.waitReady, "wait-ready", 0, "before measuring, repeat one operation until it succeeds, at most this long")
	fs.DurationVar(&c.callTimeout, "call-timeout", 60*time.Second, "deadline of each call")
	fs.Int64Var(&c.size, "size", 4<<20, "required_bytes of each CreateVolume")
	fs.StringVar(&c.prefix, "prefix", "", "volume name prefix (default bench-<start time>)")
	fs.StringVar(&c.nodeTarget, "node-target", "", "lifecycle: the node's CSI socket (unix:///path)")
	fs.StringVar(&c.dir, "dir", "", "lifecycle: directory for the staging and target paths")
	fs.StringVar(&c.fsType, "fs", "ext4", "filesystem of the mount capability")
	fs.Int64Var(&c.since, "since", 0, "first-probe: start time in Unix milliseconds; the result says how long after it")
	c.tls.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.prefix == "" {
		c.prefix = "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return c, c.check()
}

func (c config) check() error {
	var problems []error
	bad := func(format string, a ...any) { problems = append(problems, fmt.Errorf(format, a...)) }
	if !slices.Contains(Ops, c.op) {
		bad("-op %q is not one of %v", c.op, Ops)
	}
	if c.target == "" {
		bad("-target is required")
	}
	if c.concurrency < 1 || c.concurrency > 10000 {
		bad("-c %d must be in 1..10000", c.concurrency)
	}
	if c.conns < 1 || c.conns > c.concurrency {
		bad("-conns %d must be in 1..-c", c.conns)
	}
	if c.count < 0 || (c.count == 0 && c.duration <= 0) {
		bad("-count must be >= 0 and -duration positive when -count is 0")
	}
	if c.size <= 0 {
		bad("-size %d must be positive", c.size)
	}
	if c.op == "lifecycle" && (c.nodeTarget == "" || c.dir == "") {
		bad("-op lifecycle needs -node-target and -dir")
	}
	return errors.Join(problems...)
}
