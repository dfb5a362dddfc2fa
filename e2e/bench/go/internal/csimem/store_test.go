package csimem

import (
	"errors"
	"testing"
)

func TestCreateIsIdempotentByNameAndBounded(t *testing.T) {
	s := NewStore(100)
	a, err := s.Create("v1", 60, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create("v1", 50, 60)
	if err != nil || b != a {
		t.Fatalf("second create = %+v, %v; want %+v", b, err, a)
	}
	if _, err := s.Create("v1", 70, 0); !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("larger request: %v, want ErrSizeMismatch", err)
	}
	if _, err := s.Create("v2", 41, 0); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("over capacity: %v, want ErrNoSpace", err)
	}
	s.Delete(a.ID)
	s.Delete(a.ID)
	if avail, total := s.Capacity(); avail != 100 || total != 100 {
		t.Fatalf("capacity after delete = %d/%d, want 100/100", avail, total)
	}
}

func TestPagesCoverEveryVolumeOnce(t *testing.T) {
	s := NewStore(1 << 20)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		if _, err := s.Create(n, 1, 0); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for start, pages := 0, 0; ; pages++ {
		page, next := s.Page(start, 2)
		for _, v := range page {
			if seen[v.ID] {
				t.Fatalf("volume %s listed twice", v.Name)
			}
			seen[v.ID] = true
		}
		if next == 0 {
			if len(seen) != 5 || pages != 2 {
				t.Fatalf("saw %d volumes in %d pages, want 5 in 3", len(seen), pages+1)
			}
			return
		}
		start = next
	}
}
