package platform_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
)

func TestCode(t *testing.T) {
	for _, code := range []string{platform.ENOSPC, platform.EDQUOT, platform.EROFS, platform.EACCES,
		platform.EIO, platform.ENOTDIR, platform.EADDRINUSE, platform.ECONNRESET} {
		en := platform.Errno(code)
		if en == nil {
			t.Fatalf("Errno(%s) = nil", code)
		}
		wrapped := fmt.Errorf("step: %w", &fs.PathError{Op: "write", Path: "f", Err: en})
		if got := platform.Code(wrapped); got != code {
			t.Errorf("Code(Errno(%s)) = %q", code, got)
		}
		if got, want := platform.IsDiskFull(wrapped), code == platform.ENOSPC || code == platform.EDQUOT; got != want {
			t.Errorf("IsDiskFull(%s) = %v", code, got)
		}
		if !platform.IsErrno(wrapped) {
			t.Errorf("IsErrno(%s) = false", code)
		}
	}
	if platform.Code(errors.New("x")) != "" || platform.Code(nil) != "" || platform.IsErrno(errors.New("x")) {
		t.Error("a plain error has a class")
	}
	if platform.Errno("EBOGUS") != nil {
		t.Error("Errno of an unknown class")
	}
}

func TestIsAddrInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ln2, err := net.Listen("tcp", ln.Addr().String())
	if err == nil {
		ln2.Close()
		t.Fatal("second listen on a taken port succeeded")
	}
	if !platform.IsAddrInUse(err) {
		t.Fatalf("IsAddrInUse(%v) = false", err)
	}
}
