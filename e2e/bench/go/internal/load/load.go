// Package load drives a CSI endpoint with N workers for a duration or a number of operations and
// prints one JSON line: throughput, latency percentiles and errors by gRPC code. One client (this
// one) measures both our servers and the reference server, so the comparison is fair.
package load

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"pmem-csi.local/bench/internal/grpcx"
	"pmem-csi.local/bench/internal/latency"
	"pmem-csi.local/bench/internal/mtls"
)

// Report is the JSON line printed at the end.
type Report struct {
	Op           string                     `json:"op"`
	Target       string                     `json:"target"`
	Concurrency  int                        `json:"concurrency"`
	Seconds      float64                    `json:"seconds"`
	Ops          int64                      `json:"ops"`
	OpsPerSec    float64                    `json:"opsPerSec"`
	Calls        int                        `json:"calls"`
	CallsPerSec  float64                    `json:"callsPerSec"`
	Pairs        int64                      `json:"pairs,omitempty"`
	PairsPerSec  float64                    `json:"pairsPerSec,omitempty"`
	LatencyMs    latency.Summary            `json:"latencyMs"`
	StepsMs      map[string]latency.Summary `json:"stepsMs"`
	Errors       map[string]int             `json:"errors"`
	FirstError   string                     `json:"firstError,omitempty"`
	ReadyAfterMs float64                    `json:"readyAfterMs,omitempty"`
}

func round(v float64) float64 { return math.Round(v*100) / 100 }

type runner struct {
	c      config
	conns  []*grpc.ClientConn
	node   *grpc.ClientConn
	caller *caller
	errs   latency.Errors
	first  atomic.Pointer[string]
}

func (r *runner) op(cl *caller) op {
	switch r.c.op {
	case "pairs":
		return r.c.pairs(cl)
	case "info":
		return info(cl)
	case "probe":
		return probe(cl)
	default:
		return r.c.lifecycle(cl, r.node)
	}
}

// waitReady repeats one operation until it succeeds; the calls are not part of the figures.
func (r *runner) waitReady(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(r.c.waitReady)
	run := r.op(newCaller(r.c))
	for seq := int64(-1); ; seq-- {
		err := run(ctx, r.conns[0], seq)
		if err == nil {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Since(start), fmt.Errorf("not ready after %s: %w", r.c.waitReady, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// work runs operations until ctx ends (or -count is reached); an operation that has started
// runs to its end (its calls have their own deadlines), so no pair is cut in half and the time
// includes that tail.
func (r *runner) work(ctx context.Context, run op) (int64, time.Duration) {
	var next, done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range r.c.concurrency {
		wg.Add(1)
		go func(conn *grpc.ClientConn) {
			defer wg.Done()
			for ctx.Err() == nil {
				seq := next.Add(1)
				if r.c.count > 0 && seq > r.c.count {
					return
				}
				if err := run(context.Background(), conn, seq); err != nil {
					r.errs.Add(err)
					msg := err.Error()
					r.first.CompareAndSwap(nil, &msg)
					continue
				}
				done.Add(1)
			}
		}(r.conns[w%len(r.conns)])
	}
	wg.Wait()
	return done.Load(), time.Since(start)
}

func (r *runner) dial() error {
	for range r.c.conns {
		conn, err := grpcDial(r.c)
		if err != nil {
			return err
		}
		r.conns = append(r.conns, conn)
	}
	if r.c.op != "lifecycle" {
		return nil
	}
	node, err := grpcx.Dial(r.c.nodeTarget, mtls.Files{}, "")
	r.node = node
	return err
}

func (r *runner) close() {
	for _, c := range append(r.conns, r.node) {
		if c != nil {
			_ = c.Close()
		}
	}
}

// Run parses the flags, runs the load and prints the report.
func Run(args []string) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	if c.op == "first-probe" {
		return firstProbe(c)
	}
	r := &runner{c: c, caller: newCaller(c)}
	defer r.close()
	if err := r.dial(); err != nil {
		return err
	}
	ctx, cancel := grpcx.RunContext(0)
	defer cancel()
	rep := Report{Op: c.op, Target: c.target, Concurrency: c.concurrency}
	if c.waitReady > 0 {
		after, err := r.waitReady(ctx)
		if err != nil {
			return err
		}
		rep.ReadyAfterMs = round(float64(after.Microseconds()) / 1000)
	}
	runCtx, stop := ctx, context.CancelFunc(func() {})
	if c.count == 0 {
		runCtx, stop = context.WithTimeout(ctx, c.duration)
	}
	defer stop()
	ops, took := r.work(runCtx, r.op(r.caller))
	r.fill(&rep, ops, took)
	return json.NewEncoder(os.Stdout).Encode(rep)
}

func (r *runner) fill(rep *Report, ops int64, took time.Duration) {
	secs := took.Seconds()
	rep.Seconds = round(secs)
	rep.Ops, rep.OpsPerSec = ops, round(float64(ops)/secs)
	rep.Calls = r.caller.all.Count()
	rep.CallsPerSec = round(float64(rep.Calls) / secs)
	if r.c.op == "pairs" {
		rep.Pairs, rep.PairsPerSec = ops, rep.OpsPerSec
	}
	rep.LatencyMs = r.caller.all.Summary()
	rep.StepsMs = map[string]latency.Summary{}
	for m, rec := range r.caller.steps {
		rep.StepsMs[m] = rec.Summary()
	}
	rep.Errors = r.errs.Counts()
	if f := r.first.Load(); f != nil {
		rep.FirstError = *f
	}
}

func grpcDial(c config, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return grpcx.Dial(c.target, c.tls, c.serverName, opts...)
}
