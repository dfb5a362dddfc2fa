package swarm

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"pmem-csi.local/bench/internal/csimem"
	"pmem-csi.local/bench/internal/registrypb"
)

// node is one fake node: its node-controller service on its own port and its registration.
type node struct {
	id       string
	endpoint string
	store    *csimem.Store
	server   *grpc.Server
	listener net.Listener
	listed   atomic.Bool
	stats    *stats
	cfg      *config
}

func newNode(cfg *config, st *stats, i int, opts []grpc.ServerOption) (*node, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &node{
		id:       cfg.prefix + "-" + strconv.Itoa(i),
		endpoint: l.Addr().String(),
		store:    csimem.NewStore(cfg.capacity),
		listener: l,
		stats:    st,
		cfg:      cfg,
	}
	n.server = grpc.NewServer(append(opts, grpc.UnaryInterceptor(n.count))...)
	csi.RegisterControllerServer(n.server, &csimem.Controller{Store: n.store, TopologyKey: cfg.driverName + "/node", NodeID: n.id})
	return n, nil
}

// count tallies the controller's calls; the first ListVolumes means the controller is listing
// this node's volumes after its registration.
func (n *node) count(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	n.stats.countCall(info.FullMethod)
	res, err := handler(ctx, req)
	if err == nil && info.FullMethod == csi.Controller_ListVolumes_FullMethodName && !n.listed.Swap(true) {
		n.stats.firstListing()
	}
	return res, err
}

func (n *node) capacity() *registrypb.Capacity {
	available, total := n.store.Capacity()
	return &registrypb.Capacity{MaxVolumeSize: available, Available: available, Managed: total, Total: total}
}

// inventory is what the node driver sends along with a registration: every volume, complete.
func (n *node) inventory() *registrypb.VolumeInventory {
	if !n.cfg.inventory {
		return nil
	}
	page, _ := n.store.Page(0, 0)
	inv := &registrypb.VolumeInventory{Count: int64(len(page)), Volumes: make([]*registrypb.InventoryVolume, 0, len(page))}
	for _, v := range page {
		inv.Volumes = append(inv.Volumes, &registrypb.InventoryVolume{VolumeId: v.ID, CapacityBytes: v.Size, VolumeContext: map[string]string{"name": v.Name}})
	}
	return inv
}

// backoff is the node driver's retry delay: 1 s doubling up to 30 s, the upper half random.
func backoff(attempt int) time.Duration {
	d := min(30*time.Second, time.Second<<min(attempt, 5))
	return d/2 + rand.N(d/2+1)
}

// jittered is the renewal interval: a third of the lease, ±10 %.
func jittered(leaseSeconds int64) time.Duration {
	third := time.Duration(max(leaseSeconds, 1)) * time.Second / 3
	return third*9/10 + rand.N(third/5+1)
}

// register until accepted; returns the registration id and lease.
func (n *node) register(ctx context.Context, reg registrypb.RegistryClient) (string, int64, bool) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, n.cfg.callTimeout)
		start := time.Now()
		res, err := reg.RegisterController(callCtx, &registrypb.RegisterControllerRequest{
			NodeId: n.id, Endpoint: n.endpoint, Capacity: n.capacity(), DeviceMode: "fake", Version: "swarm", Inventory: n.inventory(),
		})
		cancel()
		if err == nil {
			n.stats.registerTime.Add(time.Since(start))
			n.stats.registrations.Add(1)
			n.stats.lease(res.GetLeaseSeconds())
			return res.GetRegistrationId(), res.GetLeaseSeconds(), true
		}
		if ctx.Err() != nil {
			break
		}
		n.stats.registerErrors.Add(err)
		sleep(ctx, backoff(attempt))
	}
	return "", 0, false
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// run registers, then renews at a third of the lease until ctx ends; NOT_FOUND (the lease
// expired or was revoked) means register again at once.
func (n *node) run(ctx context.Context, reg registrypb.RegistryClient) {
	id, lease, ok := n.register(ctx, reg)
	if !ok {
		return
	}
	n.stats.firstRegistration()
	for ctx.Err() == nil {
		sleep(ctx, jittered(lease))
		if ctx.Err() != nil {
			return
		}
		callCtx, cancel := context.WithTimeout(ctx, n.cfg.callTimeout)
		start := time.Now()
		res, err := reg.RenewController(callCtx, &registrypb.RenewControllerRequest{NodeId: n.id, RegistrationId: id, Capacity: n.capacity()})
		cancel()
		switch {
		case err == nil:
			n.stats.renewLatency.Add(time.Since(start))
			n.stats.renewals.Add(1)
			lease = res.GetLeaseSeconds()
			n.stats.lease(lease)
		case ctx.Err() != nil:
			return
		case status.Code(err) == codes.NotFound:
			n.stats.expiries.Add(1)
			if id, lease, ok = n.register(ctx, reg); !ok {
				return
			}
		default:
			n.stats.renewErrors.Add(err)
		}
	}
}
