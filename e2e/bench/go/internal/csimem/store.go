// Package csimem is an in-memory CSI Controller (and Identity) service: volumes idempotent by name
// with the driver's deterministic ids, a fixed capacity, paginated listing. The reference server
// (refcsi) and every fake node of the swarm serve it.
package csimem

import (
	"errors"
	"slices"
	"sync"

	"pmem-csi.local/bench/internal/volid"
)

// Volume is one volume of the store.
type Volume struct {
	ID   string
	Name string
	Size int64
}

var (
	// ErrNoSpace means the store's capacity is used up.
	ErrNoSpace = errors.New("not enough free capacity")
	// ErrSizeMismatch means a volume of that name exists with a size outside the request.
	ErrSizeMismatch = errors.New("a volume of that name exists with an incompatible size")
)

// Store is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	total int64
	used  int64
	byID  map[string]Volume
}

// NewStore holds volumes up to total bytes.
func NewStore(total int64) *Store {
	return &Store{total: total, byID: map[string]Volume{}}
}

// Create returns the volume of that name, creating it with size bytes when it does not exist;
// an existing one must have at least size and at most limit (0 = no limit) bytes.
func (s *Store) Create(name string, size, limit int64) (Volume, error) {
	id := volid.ForName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.byID[id]; ok {
		if v.Size < size || (limit > 0 && v.Size > limit) {
			return Volume{}, ErrSizeMismatch
		}
		return v, nil
	}
	if s.used+size > s.total {
		return Volume{}, ErrNoSpace
	}
	v := Volume{ID: id, Name: name, Size: size}
	s.byID[id] = v
	s.used += size
	return v, nil
}

// Delete removes a volume; an unknown id is no error (CSI DeleteVolume is idempotent).
func (s *Store) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.byID[id]; ok {
		delete(s.byID, id)
		s.used -= v.Size
	}
}

// Page returns up to max volumes (0 = all) in id order, starting after index start, and the
// index of the next page (0 when this is the last).
func (s *Store) Page(start, limit int) ([]Volume, int) {
	s.mu.Lock()
	all := make([]Volume, 0, len(s.byID))
	for _, v := range s.byID {
		all = append(all, v)
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b Volume) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	if start >= len(all) {
		return nil, 0
	}
	end := len(all)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	if end == len(all) {
		return all[start:end], 0
	}
	return all[start:end], end
}

// Capacity returns the free and the total bytes.
func (s *Store) Capacity() (available, total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total - s.used, s.total
}
