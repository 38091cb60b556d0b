package platform

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// Wine returns the version of Wine this process runs under (the
// wine_get_version export of Wine's ntdll.dll, which Windows' ntdll
// lacks), or "" on Windows itself.
func Wine() string {
	proc := windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version")
	if proc.Find() != nil {
		return ""
	}
	r, _, _ := proc.Call() // const char *, static in ntdll
	if r == 0 {
		return "unknown"
	}
	return windows.BytePtrToString(*(**byte)(unsafe.Pointer(&r)))
}
