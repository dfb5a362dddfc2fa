package volid

import "testing"

// Expected ids computed by the driver's volumeIdForName (packages/api/src/volume-id.ts).
func TestForName(t *testing.T) {
	for name, want := range map[string]string{
		"pvc-0b1c2d3e": "pvc-0b-d94a39f9dadaece8b2b3cc6c39f9d57def9d1fce53e68ad35c9e90b1",
		"a b/c:d":      "a_b_c_-c73ccabebc8b49fbedfdb99f1f3ab51fb843f0c6e0221df202376af4",
		"é-vol":        "_-vol-7059a2fc954d338a1f791bcaeed00583ed7cbeb13ab75ef8131c4ca2",
	} {
		if got := ForName(name); got != want {
			t.Errorf("ForName(%q) = %q, want %q", name, got, want)
		}
	}
}
