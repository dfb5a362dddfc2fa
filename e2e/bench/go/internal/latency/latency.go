// Package latency collects call durations and error codes from many goroutines and summarises
// them as percentiles.
package latency

import (
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"google.golang.org/grpc/status"
)

// Summary is in milliseconds.
type Summary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Recorder is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	samples []time.Duration
}

// Add records one duration.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.samples = append(r.samples, d)
	r.mu.Unlock()
}

// Count is the number of recorded durations.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.samples)
}

// Summary computes the percentiles (nearest rank) of what was recorded so far.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	s := slices.Clone(r.samples)
	r.mu.Unlock()
	if len(s) == 0 {
		return Summary{}
	}
	slices.Sort(s)
	return Summary{P50: ms(rank(s, 0.50)), P99: ms(rank(s, 0.99)), Max: ms(s[len(s)-1])}
}

func rank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

// Errors counts failures by gRPC code name ("UNAVAILABLE", ...) and keeps the first message of
// each code; safe for concurrent use.
type Errors struct {
	mu     sync.Mutex
	counts map[string]int
	first  map[string]string
}

// Add counts err (nil is ignored) and reports whether it was an error.
func (e *Errors) Add(err error) bool {
	if err == nil {
		return false
	}
	name := CodeName(err)
	e.mu.Lock()
	if e.counts == nil {
		e.counts, e.first = map[string]int{}, map[string]string{}
	}
	e.counts[name]++
	if _, ok := e.first[name]; !ok {
		e.first[name] = err.Error()
	}
	e.mu.Unlock()
	return true
}

// Samples is the first message of each code.
func (e *Errors) Samples() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.first)
}

// Counts is a copy of the counts so far.
func (e *Errors) Counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		return map[string]int{}
	}
	return maps.Clone(e.counts)
}

// CodeName is the gRPC status code of err in the spelling of the proto ("DEADLINE_EXCEEDED").
func CodeName(err error) string {
	var b strings.Builder
	for i, r := range status.Code(err).String() {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
