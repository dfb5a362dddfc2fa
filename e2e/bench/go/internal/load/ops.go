package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"

	"pmem-csi.local/bench/internal/latency"
)

// caller times each call by method name.
type caller struct {
	timeout time.Duration
	steps   map[string]*latency.Recorder
	all     *latency.Recorder
}

func newCaller(c config) *caller {
	cl := &caller{timeout: c.callTimeout, all: &latency.Recorder{}, steps: map[string]*latency.Recorder{}}
	for _, m := range methods(c.op) {
		cl.steps[m] = &latency.Recorder{}
	}
	return cl
}

func (c *caller) call(ctx context.Context, method string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	err := fn(ctx)
	if err == nil {
		d := time.Since(start)
		c.all.Add(d)
		c.steps[method].Add(d)
	}
	return err
}

// An op is one unit of work of a worker; seq makes names unique.
type op func(ctx context.Context, conn *grpc.ClientConn, seq int64) error

func methods(name string) []string {
	switch name {
	case "pairs":
		return []string{"CreateVolume", "DeleteVolume"}
	case "info":
		return []string{"GetPluginInfo"}
	case "probe", "first-probe":
		return []string{"Probe"}
	case "lifecycle":
		return []string{"CreateVolume", "NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeUnstageVolume", "DeleteVolume"}
	}
	return nil
}

func capability(fsType string) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func (c config) createRequest(seq int64) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{
		Name:               fmt.Sprintf("%s-%d", c.prefix, seq),
		CapacityRange:      &csi.CapacityRange{RequiredBytes: c.size},
		VolumeCapabilities: []*csi.VolumeCapability{capability(c.fsType)},
		Parameters:         map[string]string{"eraseafter": "false"},
	}
}

func (c config) pairs(cl *caller) op {
	return func(ctx context.Context, conn *grpc.ClientConn, seq int64) error {
		ctl := csi.NewControllerClient(conn)
		var id string
		err := cl.call(ctx, "CreateVolume", func(ctx context.Context) error {
			res, err := ctl.CreateVolume(ctx, c.createRequest(seq))
			id = res.GetVolume().GetVolumeId()
			return err
		})
		if err != nil {
			return err
		}
		return cl.call(ctx, "DeleteVolume", func(ctx context.Context) error {
			_, err := ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
			return err
		})
	}
}

func info(cl *caller) op {
	return func(ctx context.Context, conn *grpc.ClientConn, _ int64) error {
		return cl.call(ctx, "GetPluginInfo", func(ctx context.Context) error {
			_, err := csi.NewIdentityClient(conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
			return err
		})
	}
}

func probe(cl *caller) op {
	return func(ctx context.Context, conn *grpc.ClientConn, _ int64) error {
		return cl.call(ctx, "Probe", func(ctx context.Context) error {
			_, err := csi.NewIdentityClient(conn).Probe(ctx, &csi.ProbeRequest{})
			return err
		})
	}
}

// lifecycle: create on the node-controller, stage + publish + unpublish + unstage on the node's
// CSI socket, delete on the node-controller.
func (c config) lifecycle(cl *caller, node *grpc.ClientConn) op {
	return func(ctx context.Context, conn *grpc.ClientConn, seq int64) error {
		ctl, ns := csi.NewControllerClient(conn), csi.NewNodeClient(node)
		var vol *csi.Volume
		err := cl.call(ctx, "CreateVolume", func(ctx context.Context) error {
			res, err := ctl.CreateVolume(ctx, c.createRequest(seq))
			vol = res.GetVolume()
			return err
		})
		if err != nil {
			return err
		}
		base := filepath.Join(c.dir, vol.GetVolumeId())
		staging, target := filepath.Join(base, "staging"), filepath.Join(base, "target")
		if err := os.MkdirAll(staging, 0o750); err != nil {
			return err
		}
		defer os.RemoveAll(base) //nolint:errcheck // best effort: only empty directories remain
		vc := capability(c.fsType)
		steps := []struct {
			method string
			fn     func(ctx context.Context) error
		}{
			{"NodeStageVolume", func(ctx context.Context) error {
				_, err := ns.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging, VolumeCapability: vc, VolumeContext: vol.GetVolumeContext()})
				return err
			}},
			{"NodePublishVolume", func(ctx context.Context) error {
				_, err := ns.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging, TargetPath: target, VolumeCapability: vc, VolumeContext: vol.GetVolumeContext()})
				return err
			}},
			{"NodeUnpublishVolume", func(ctx context.Context) error {
				_, err := ns.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target})
				return err
			}},
			{"NodeUnstageVolume", func(ctx context.Context) error {
				_, err := ns.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging})
				return err
			}},
			{"DeleteVolume", func(ctx context.Context) error {
				_, err := ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
				return err
			}},
		}
		for _, s := range steps {
			if err := cl.call(ctx, s.method, s.fn); err != nil {
				return fmt.Errorf("%s: %w", s.method, err)
			}
		}
		return nil
	}
}
