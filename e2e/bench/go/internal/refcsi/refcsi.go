// Package refcsi is the reference CSI server of the benchmarks: csi.v1 Identity + Controller on
// grpc-go with an in-memory volume map, on a unix socket and/or a TCP port with mutual TLS. It is
// what a small, straightforward Go driver would do per call, to compare our servers against.
package refcsi

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"

	"pmem-csi.local/bench/internal/csimem"
	"pmem-csi.local/bench/internal/grpcx"
	"pmem-csi.local/bench/internal/mtls"
)

type config struct {
	unix, tcp, clientSAN, name string
	capacity                   int64
	duration                   time.Duration
	tls                        mtls.Files
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("refcsi", flag.ContinueOnError)
	fs.StringVar(&c.unix, "unix", "", "unix socket to serve on, without TLS (unix:///path or /path)")
	fs.StringVar(&c.tcp, "tcp", "", "127.0.0.1:PORT to serve on with mutual TLS (port 0 = any)")
	fs.StringVar(&c.clientSAN, "client-san", "pmem-registry", "DNS SAN a TCP client certificate must have")
	fs.StringVar(&c.name, "name", "refcsi.pmem-csi.local", "plugin name of GetPluginInfo")
	fs.Int64Var(&c.capacity, "capacity", 1<<50, "bytes the volume map can hold")
	fs.DurationVar(&c.duration, "duration", 30*time.Minute, "stop by itself after this long")
	c.tls.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.unix == "" && c.tcp == "" {
		return c, errors.New("-unix or -tcp is required")
	}
	if c.tcp != "" && !c.tls.Set() {
		return c, errors.New("-tcp needs -ca, -cert and -key (the TCP endpoint always uses mutual TLS)")
	}
	if c.duration <= 0 {
		return c, errors.New("-duration must be positive")
	}
	return c, nil
}

func newServer(store *csimem.Store, name, version string, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(opts...)
	csi.RegisterIdentityServer(s, &csimem.Identity{Name: name, Version: version})
	csi.RegisterControllerServer(s, &csimem.Controller{Store: store})
	return s
}

// Run serves until a signal or -duration, then stops gracefully.
func Run(args []string, version string) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	store := csimem.NewStore(c.capacity)
	ready := map[string]string{"event": "ready"}
	var servers []*grpc.Server
	errs := make(chan error, 2)
	serve := func(addr string, opts []grpc.ServerOption, key string) error {
		l, err := grpcx.Listen(addr)
		if err != nil {
			return fmt.Errorf("-%s %s: %w", key, addr, err)
		}
		s := newServer(store, c.name, version, opts...)
		servers = append(servers, s)
		ready[key] = l.Addr().String()
		go func(l net.Listener) { errs <- s.Serve(l) }(l)
		return nil
	}
	if c.unix != "" {
		if err := serve(c.unix, nil, "unix"); err != nil {
			return err
		}
	}
	if c.tcp != "" {
		opts, err := grpcx.ServerOptions(c.tls, c.clientSAN)
		if err != nil {
			return err
		}
		if err := serve(c.tcp, opts, "tcp"); err != nil {
			return err
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(ready); err != nil {
		return err
	}
	ctx, cancel := grpcx.RunContext(c.duration)
	defer cancel()
	select {
	case <-ctx.Done():
	case err := <-errs:
		return err
	}
	for _, s := range servers {
		s.GracefulStop()
	}
	return nil
}
