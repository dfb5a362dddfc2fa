// pmem-csi-registrar: registers a CSI driver's node socket with the kubelet, for the real-node
// test tier. It takes the command line of the node-driver-registrar sidecar that the operator, the
// Helm chart and kustomize configure (--csi-address, --kubelet-registration-path, --http-endpoint,
// --v), so the DaemonSet runs unchanged with this image in its place. Why it exists: the Go module
// proxy reachable here serves no version of github.com/kubernetes-csi/node-driver-registrar, so the
// sidecar cannot be built from source like the other test tools (e2e/tools/versions.env).
//
// What it does, as the kubelet's plugin watcher expects of a registrar:
//  1. asks the driver's CSI socket for its name (Identity.GetPluginInfo), retrying until it answers;
//  2. serves the kubelet's Registration service on <plugin-registration-path>/<name>-reg.sock,
//     answering GetInfo with type CSIPlugin, the driver name, the socket path as the kubelet sees it
//     and the supported CSI plugin API versions;
//  3. exits non-zero if the kubelet reports that registration failed (the container restarts and
//     registers again), and removes its socket on SIGTERM/SIGINT;
//  4. serves /healthz on --http-endpoint: 200 while its socket exists and the kubelet has not
//     reported a failure, 503 otherwise (the DaemonSet's liveness probe).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

var version = "dev"

type options struct {
	csiAddress             string
	kubeletRegistration    string
	pluginRegistrationPath string
	httpEndpoint           string
	verbosity              int
	callTimeout            time.Duration
	showVersion            bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("pmem-csi-registrar", flag.ContinueOnError)
	fs.StringVar(&o.csiAddress, "csi-address", "", "path of the CSI driver's socket inside this container (required)")
	fs.StringVar(&o.kubeletRegistration, "kubelet-registration-path", "", "path of the CSI driver's socket on the host, as the kubelet dials it (required)")
	fs.StringVar(&o.pluginRegistrationPath, "plugin-registration-path", "/registration", "directory of the kubelet's plugin registration sockets inside this container")
	fs.StringVar(&o.httpEndpoint, "http-endpoint", "", "host:port of the /healthz endpoint (empty: none)")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (>= 5 logs every registration call)")
	fs.DurationVar(&o.callTimeout, "timeout", 10*time.Second, "timeout of each call to the CSI driver")
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.showVersion {
		return o, nil
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: every option is a --flag", fs.Args())
	}
	var missing []string
	if o.csiAddress == "" {
		missing = append(missing, "--csi-address")
	}
	if o.kubeletRegistration == "" {
		missing = append(missing, "--kubelet-registration-path")
	}
	if len(missing) > 0 {
		return o, fmt.Errorf("missing required flags: %s", strings.Join(missing, ", "))
	}
	if !filepath.IsAbs(o.kubeletRegistration) {
		return o, fmt.Errorf("--kubelet-registration-path must be an absolute path, got %q", o.kubeletRegistration)
	}
	if o.callTimeout <= 0 {
		return o, fmt.Errorf("--timeout must be positive, got %s", o.callTimeout)
	}
	return o, nil
}

// registrar implements the kubelet's Registration service and remembers what the kubelet said.
type registrar struct {
	registration.UnimplementedRegistrationServer
	driverName string
	endpoint   string
	log        *slog.Logger
	verbose    bool
	failed     chan string // the kubelet's error when it refused the plugin

	mu     sync.Mutex
	status string // "", "registered" or the kubelet's error
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	if r.verbose {
		r.log.Info("kubelet asked for the plugin info", "driver", r.driverName, "endpoint", r.endpoint)
	}
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              r.driverName,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, s *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.PluginRegistered {
		r.status = "registered"
		r.log.Info("kubelet registered the plugin", "driver", r.driverName)
	} else {
		r.status = s.Error
		if r.status == "" {
			r.status = "the kubelet refused the plugin without a reason"
		}
		r.log.Error("kubelet refused the plugin", "driver", r.driverName, "error", r.status)
		select {
		case r.failed <- r.status:
		default:
		}
	}
	return &registration.RegistrationStatusResponse{}, nil
}

func (r *registrar) healthy(socket string) (bool, string) {
	if _, err := os.Stat(socket); err != nil {
		return false, fmt.Sprintf("registration socket %s: %v", socket, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != "" && r.status != "registered" {
		return false, "kubelet refused the plugin: " + r.status
	}
	if r.status == "" {
		return true, "waiting for the kubelet to register the plugin"
	}
	return true, "registered"
}

// driverName asks the CSI driver for its name, retrying until it answers or ctx ends; it logs what
// it is waiting for every 10 s.
func driverName(ctx context.Context, log *slog.Logger, address string, timeout time.Duration) (string, error) {
	conn, err := grpc.NewClient("unix://"+address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", fmt.Errorf("CSI address %q: %w", address, err)
	}
	defer conn.Close()
	identity := csi.NewIdentityClient(conn)
	start := time.Now()
	lastLog := time.Time{}
	for {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		info, err := identity.GetPluginInfo(callCtx, &csi.GetPluginInfoRequest{})
		cancel()
		if err == nil {
			if info.GetName() == "" {
				return "", fmt.Errorf("CSI driver at %s reported an empty name in GetPluginInfo", address)
			}
			return info.GetName(), nil
		}
		if time.Since(lastLog) >= 10*time.Second {
			log.Info("waiting for the CSI driver to answer GetPluginInfo", "address", address, "waited", time.Since(start).Round(time.Second).String(), "error", err.Error())
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("stopped while waiting for the CSI driver at %s: %w", address, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func run(o options, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	name, err := driverName(ctx, log, o.csiAddress, o.callTimeout)
	if err != nil {
		return err
	}
	socket := filepath.Join(o.pluginRegistrationPath, name+"-reg.sock")
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the stale registration socket %s: %w", socket, err)
	}
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("listening on the registration socket: %w", err)
	}
	defer os.Remove(socket)

	r := &registrar{driverName: name, endpoint: o.kubeletRegistration, log: log, verbose: o.verbosity >= 5, failed: make(chan string, 1)}
	server := grpc.NewServer()
	registration.RegisterRegistrationServer(server, r)
	serveErr := make(chan error, 2)
	go func() { serveErr <- server.Serve(listener) }()
	defer server.Stop()
	log.Info("serving the kubelet's registration service", "driver", name, "socket", socket, "kubeletRegistrationPath", o.kubeletRegistration)

	if o.httpEndpoint != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			ok, why := r.healthy(socket)
			if !ok {
				http.Error(w, why, http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, why)
		})
		httpServer := &http.Server{Addr: o.httpEndpoint, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { serveErr <- httpServer.ListenAndServe() }()
		defer httpServer.Close()
	}

	select {
	case <-ctx.Done():
		log.Info("stopping: signal received", "driver", name)
		return nil
	case why := <-r.failed:
		return fmt.Errorf("the kubelet refused driver %s: %s", name, why)
	case err := <-serveErr:
		return fmt.Errorf("a server stopped: %w", err)
	}
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pmem-csi-registrar: %v\n", err)
		os.Exit(2)
	}
	if o.showVersion {
		fmt.Printf("pmem-csi-registrar %s\n", version)
		return
	}
	log.Info("starting", "version", version)
	if err := run(o, log); err != nil {
		log.Error("failed", "error", err.Error())
		os.Exit(1)
	}
}
