package swarm

import (
	"sync"
	"sync/atomic"
	"time"

	"pmem-csi.local/bench/internal/latency"
)

// stats of the whole swarm; safe for concurrent use.
type stats struct {
	start          time.Time
	nodes          int64
	registered     atomic.Int64 // nodes whose first registration was accepted
	listed         atomic.Int64 // nodes the controller asked for their volumes at least once
	registrations  atomic.Int64 // accepted registrations, re-registrations included
	renewals       atomic.Int64
	expiries       atomic.Int64 // renewals answered NOT_FOUND
	maxLease       atomic.Int64 // the longest lease the controller granted, seconds
	registerErrors latency.Errors
	renewErrors    latency.Errors
	renewLatency   latency.Recorder
	registerTime   latency.Recorder
	calls          sync.Map // method -> *atomic.Int64 (calls the controller made to the fake nodes)

	mu            sync.Mutex
	allRegistered time.Duration
	allListed     time.Duration
	events        chan event
}

type event struct {
	Event string  `json:"event"`
	Ms    float64 `json:"ms"`
	Nodes int64   `json:"nodes"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// firstRegistration and firstListing record when the last node got there.
func (s *stats) firstRegistration() { s.reached(&s.registered, &s.allRegistered, "registered") }
func (s *stats) firstListing()      { s.reached(&s.listed, &s.allListed, "listed") }

func (s *stats) reached(n *atomic.Int64, at *time.Duration, name string) {
	if n.Add(1) != s.nodes {
		return
	}
	d := time.Since(s.start)
	s.mu.Lock()
	*at = d
	s.mu.Unlock()
	s.events <- event{Event: name, Ms: ms(d), Nodes: s.nodes}
}

func (s *stats) countCall(method string) {
	v, _ := s.calls.LoadOrStore(method, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Report is the last JSON line of the swarm.
type Report struct {
	Event           string            `json:"event"`
	Nodes           int64             `json:"nodes"`
	Seconds         float64           `json:"seconds"`
	Registered      int64             `json:"registered"`
	Listed          int64             `json:"listed"`
	AllRegisteredMs float64           `json:"allRegisteredMs,omitempty"`
	AllListedMs     float64           `json:"allListedMs,omitempty"`
	Registrations   int64             `json:"registrations"`
	RegisterErrors  map[string]int    `json:"registerErrors"`
	RegisterSamples map[string]string `json:"registerErrorSamples,omitempty"`
	RegisterMs      latency.Summary   `json:"registerMs"`
	Renewals        int64             `json:"renewals"`
	RenewErrors     map[string]int    `json:"renewErrors"`
	RenewSamples    map[string]string `json:"renewErrorSamples,omitempty"`
	Expiries        int64             `json:"expiries"`
	RenewMs         latency.Summary   `json:"renewMs"`
	NodeCalls       map[string]int64  `json:"nodeCalls"`
	MaxLeaseSeconds int64             `json:"maxLeaseSeconds"`
	FileLimit       uint64            `json:"fileLimit"`
}

func (s *stats) report(fileLimit uint64) Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := map[string]int64{}
	s.calls.Range(func(k, v any) bool {
		calls[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return Report{
		Event: "report", Nodes: s.nodes, Seconds: time.Since(s.start).Seconds(),
		Registered: s.registered.Load(), Listed: s.listed.Load(),
		AllRegisteredMs: ms(s.allRegistered), AllListedMs: ms(s.allListed),
		Registrations: s.registrations.Load(), RegisterErrors: s.registerErrors.Counts(), RegisterSamples: s.registerErrors.Samples(), RegisterMs: s.registerTime.Summary(),
		Renewals: s.renewals.Load(), RenewErrors: s.renewErrors.Counts(), RenewSamples: s.renewErrors.Samples(), Expiries: s.expiries.Load(), RenewMs: s.renewLatency.Summary(),
		NodeCalls: calls, MaxLeaseSeconds: s.maxLease.Load(), FileLimit: fileLimit,
	}
}

// lease records a granted lease.
func (s *stats) lease(seconds int64) {
	for {
		old := s.maxLease.Load()
		if seconds <= old || s.maxLease.CompareAndSwap(old, seconds) {
			return
		}
	}
}
