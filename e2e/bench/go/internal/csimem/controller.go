package csimem

import (
	"context"
	"errors"
	"strconv"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// DefaultVolumeSize is used when a CreateVolume request gives no size (the driver's default).
const DefaultVolumeSize = 1 << 30

// Controller serves csi.v1.Controller from a Store.
type Controller struct {
	csi.UnimplementedControllerServer
	Store *Store
	// TopologyKey and NodeID, when set, give every volume the accessible topology {key: node}.
	TopologyKey, NodeID string
}

func (c *Controller) volume(v Volume) *csi.Volume {
	out := &csi.Volume{
		VolumeId:      v.ID,
		CapacityBytes: v.Size,
		VolumeContext: map[string]string{"name": v.Name},
	}
	if c.TopologyKey != "" {
		out.AccessibleTopology = []*csi.Topology{{Segments: map[string]string{c.TopologyKey: c.NodeID}}}
	}
	return out
}

func sizeOf(r *csi.CapacityRange) (size, limit int64, err error) {
	size, limit = r.GetRequiredBytes(), r.GetLimitBytes()
	if size < 0 || limit < 0 || (limit > 0 && size > limit) {
		return 0, 0, status.Error(codes.OutOfRange, "capacity_range: required_bytes and limit_bytes must be >= 0 and required <= limit")
	}
	if size == 0 {
		size = DefaultVolumeSize
		if limit > 0 && limit < size {
			size = limit
		}
	}
	return size, limit, nil
}

// CreateVolume is idempotent by name.
func (c *Controller) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities are required")
	}
	size, limit, err := sizeOf(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	v, err := c.Store.Create(req.GetName(), size, limit)
	switch {
	case errors.Is(err, ErrNoSpace):
		return nil, status.Errorf(codes.ResourceExhausted, "no room for %d bytes", size)
	case errors.Is(err, ErrSizeMismatch):
		return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with another size", req.GetName())
	case err != nil:
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateVolumeResponse{Volume: c.volume(v)}, nil
}

// DeleteVolume of an unknown id succeeds.
func (c *Controller) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	c.Store.Delete(req.GetVolumeId())
	return &csi.DeleteVolumeResponse{}, nil
}

// ListVolumes pages by index; the token is the decimal index of the next entry.
func (c *Controller) ListVolumes(_ context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	start := 0
	if t := req.GetStartingToken(); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return nil, status.Errorf(codes.Aborted, "starting_token %q is not a token of this server", t)
		}
		start = n
	}
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries must be >= 0")
	}
	page, next := c.Store.Page(start, int(req.GetMaxEntries()))
	res := &csi.ListVolumesResponse{Entries: make([]*csi.ListVolumesResponse_Entry, 0, len(page))}
	for _, v := range page {
		res.Entries = append(res.Entries, &csi.ListVolumesResponse_Entry{Volume: c.volume(v)})
	}
	if next > 0 {
		res.NextToken = strconv.Itoa(next)
	}
	return res, nil
}

// GetCapacity reports the free bytes, which is also the largest volume.
func (c *Controller) GetCapacity(context.Context, *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	available, _ := c.Store.Capacity()
	return &csi.GetCapacityResponse{AvailableCapacity: available, MaximumVolumeSize: wrapperspb.Int64(available)}, nil
}

// ControllerGetCapabilities lists what this service implements.
func (c *Controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	caps := []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
	}
	res := &csi.ControllerGetCapabilitiesResponse{}
	for _, t := range caps {
		res.Capabilities = append(res.Capabilities, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}},
		})
	}
	return res, nil
}
