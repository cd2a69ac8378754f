//go:build !unix

package live

// openFileLimit is unknown here: the default cap stays DefaultMaxInFlight.
func openFileLimit() uint64 { return 0 }
