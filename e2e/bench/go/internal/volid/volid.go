// Package volid derives a volume id from a CreateVolume name the way the driver does: the first
// six characters of the name (characters LVM would refuse become '_'), '-', and the SHA-224 hex
// digest of the name. The controller warns when a node answers with another id.
package volid

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const prefixLength = 6

func safe(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("+_.-", r):
		return r
	default:
		return '_'
	}
}

// ForName returns the volume id of a non-empty name.
func ForName(name string) string {
	runes := []rune(name)
	prefix := strings.Map(safe, string(runes[:min(len(runes), prefixLength)]))
	sum := sha256.Sum224([]byte(name))
	return prefix + "-" + hex.EncodeToString(sum[:])
}
