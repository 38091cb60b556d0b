package durable

// TempName is tempName for tests, ignoring its (crypto/rand) error.
func TempName(path string) string {
	s, _ := tempName(path)
	return s
}
