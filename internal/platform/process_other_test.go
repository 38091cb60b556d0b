//go:build !linux

package platform_test

import "runtime"

// The native exit watch reaps only where it is the portable one (macOS).
const nativeReaps = runtime.GOOS == "darwin"

func zombie(int) bool { return false }
