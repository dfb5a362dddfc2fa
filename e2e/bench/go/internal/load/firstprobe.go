package load

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// FirstProbe is the JSON line of -op first-probe.
type FirstProbe struct {
	Op       string  `json:"op"`
	Target   string  `json:"target"`
	AtUnixMs int64   `json:"atUnixMs"`
	Ms       float64 `json:"ms,omitempty"`
	Attempts int     `json:"attempts"`
}

// firstProbe prints {"event":"polling"} once it polls, then the time of the first successful,
// ready Probe. Reconnects are retried every few milliseconds, so the figure is not grpc's default
// one-second backoff.
func firstProbe(c config) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	conn, err := grpcDialFast(c)
	if err != nil {
		return err
	}
	defer conn.Close() //nolint:errcheck // closing a client
	id := csi.NewIdentityClient(conn)
	if err := json.NewEncoder(os.Stdout).Encode(map[string]string{"event": "polling", "target": c.target}); err != nil {
		return err
	}
	for attempts := 1; ; attempts++ {
		callCtx, stop := context.WithTimeout(ctx, time.Second)
		res, err := id.Probe(callCtx, &csi.ProbeRequest{}, grpc.WaitForReady(true))
		stop()
		if err == nil && (res.GetReady() == nil || res.GetReady().GetValue()) {
			now := time.Now().UnixMilli()
			out := FirstProbe{Op: c.op, Target: c.target, AtUnixMs: now, Attempts: attempts}
			if c.since > 0 {
				out.Ms = float64(now - c.since)
			}
			return json.NewEncoder(os.Stdout).Encode(out)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no successful Probe of %s within %s (last: %v)", c.target, c.duration, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func grpcDialFast(c config) (*grpc.ClientConn, error) {
	params := grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 2 * time.Millisecond, Multiplier: 1.2, Jitter: 0.1, MaxDelay: 10 * time.Millisecond},
		MinConnectTimeout: time.Second,
	}
	return grpcDial(c, grpc.WithConnectParams(params))
}
