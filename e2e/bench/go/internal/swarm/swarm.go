// Package swarm registers many fake nodes with our controller's registry over mutual TLS, renews
// their leases like node drivers do, and serves each fake node's node-controller service (an
// in-memory CSI Controller) on its own 127.0.0.1 port. It prints JSON lines: "listening",
// "registering", "registered" (all first registrations accepted), "listed" (the controller listed
// every node's volumes; with -inventory, the default, it may not need to), and a final "report"
// with renewal latency, errors and lease expiries.
package swarm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"pmem-csi.local/bench/internal/grpcx"
	"pmem-csi.local/bench/internal/mtls"
	"pmem-csi.local/bench/internal/registrypb"
)

// Descriptors per fake node: its listener, the controller's connection to it, its own
// connection to the registry; plus some for the process.
const fdsPerNode, fdsSpare = 3, 200

func startNodes(cfg *config, st *stats) ([]*node, error) {
	opts, err := grpcx.ServerOptions(cfg.tls, cfg.controllerSAN)
	if err != nil {
		return nil, err
	}
	nodes := make([]*node, 0, cfg.nodes)
	for i := range cfg.nodes {
		n, err := newNode(cfg, st, i, opts)
		if err != nil {
			stopNodes(nodes)
			return nil, fmt.Errorf("listener %d of %d: %w", i+1, cfg.nodes, err)
		}
		go func() { _ = n.server.Serve(n.listener) }()
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func stopNodes(nodes []*node) {
	for _, n := range nodes {
		n.server.Stop()
	}
}

// Run starts the swarm and reports until -duration or a signal.
func Run(args []string) error {
	cfg, err := parse(args)
	if err != nil {
		return err
	}
	limit, err := raiseFileLimit(uint64(cfg.nodes*fdsPerNode + fdsSpare))
	if err != nil {
		return err
	}
	clientTLS, err := mtls.Client(cfg.tls, cfg.registrySAN)
	if err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	st := &stats{nodes: int64(cfg.nodes), events: make(chan event, 4)}
	began := time.Now()
	nodes, err := startNodes(&cfg, st)
	if err != nil {
		return err
	}
	defer stopNodes(nodes)
	if err := out.Encode(event{Event: "listening", Ms: ms(time.Since(began)), Nodes: st.nodes}); err != nil {
		return err
	}
	ctx, cancel := grpcx.RunContext(cfg.duration)
	defer cancel()
	st.start = time.Now()
	if err := out.Encode(map[string]any{"event": "registering", "atUnixMs": st.start.UnixMilli(), "nodes": st.nodes}); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var conns []*grpc.ClientConn
	for _, n := range nodes {
		conn, err := grpc.NewClient(cfg.registry, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS)))
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		conns = append(conns, conn)
		wg.Add(1)
		go func() { defer wg.Done(); n.run(ctx, registrypb.NewRegistryClient(conn)) }()
	}
	forward(ctx, out, st.events)
	wg.Wait()
	for _, c := range conns {
		_ = c.Close()
	}
	return out.Encode(st.report(limit))
}

// forward prints events as they happen until ctx ends.
func forward(ctx context.Context, out *json.Encoder, events <-chan event) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-events:
			_ = out.Encode(e)
		}
	}
}
