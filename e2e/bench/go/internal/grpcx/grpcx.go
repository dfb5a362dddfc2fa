// Package grpcx holds what every bench tool does with gRPC: listen on a unix socket or TCP port,
// dial one, with mutual TLS when certificate files are given, and stop on a signal or a deadline.
package grpcx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"pmem-csi.local/bench/internal/mtls"
)

// IsUnix reports whether addr names a unix socket ("unix:///path" or an absolute path).
func IsUnix(addr string) bool {
	return strings.HasPrefix(addr, "unix://") || strings.HasPrefix(addr, "/")
}

func socketPath(addr string) string { return strings.TrimPrefix(addr, "unix://") }

// Listen on "unix:///path", "/path" (a stale socket file is removed) or "host:port".
func Listen(addr string) (net.Listener, error) {
	if !IsUnix(addr) {
		return net.Listen("tcp", addr)
	}
	path := socketPath(addr)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
	}
	return net.Listen("unix", path)
}

// Target turns an address into a grpc-go target.
func Target(addr string) string {
	if IsUnix(addr) {
		return "unix://" + socketPath(addr)
	}
	return addr
}

// Dial creates a client for addr; with files set it uses mutual TLS and expects serverName.
func Dial(addr string, files mtls.Files, serverName string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if files.Set() {
		cfg, err := mtls.Client(files, serverName)
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	return grpc.NewClient(Target(addr), append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
}

// ServerOptions are the credentials of a server: mutual TLS accepting clientSAN when files are set.
func ServerOptions(files mtls.Files, clientSAN string) ([]grpc.ServerOption, error) {
	if !files.Set() {
		return nil, nil
	}
	cfg, err := mtls.Server(files, clientSAN)
	if err != nil {
		return nil, err
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}, nil
}

// RunContext ends on SIGINT/SIGTERM or after d (d <= 0: no deadline).
func RunContext(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	if d <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}
