package platform

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// childPipeSize is each direction's buffer, as libuv sizes a child's
// stdio pipes.
const childPipeSize = 64 << 10

// ChildPipe makes a named pipe \\.\pipe\pikit-<128 random bits>: one
// instance (FILE_FLAG_FIRST_PIPE_INSTANCE, so no other process can have
// made the name first), local clients only, a DACL granting only this
// user. This process's end is the server end, opened for overlapped I/O,
// which os.NewFile attaches to the runtime's I/O completion port (so
// deadlines work and Close cancels a pending Read or Write); the child's
// end is the client end, opened synchronously, as a child expects its
// standard handles. libuv makes a child's stdio pipes the same way.
// os.Pipe's anonymous pipes are synchronous: a Write the child does not
// read could be stopped by nothing but the child's end (see the Unix file
// for the contract).
func ChildPipe(childReads bool) (parent, child *os.File, err error) {
	var nonce [16]byte
	rand.Read(nonce[:])
	name := `\\.\pipe\pikit-` + hex.EncodeToString(nonce[:])
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	sids, err := userSIDs()
	if err != nil {
		return nil, nil, &os.SyscallError{Syscall: "GetTokenInformation", Err: err}
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;" + sids[0].String() + ")")
	if err != nil {
		return nil, nil, err
	}
	sa := windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	// The child's end may set its pipe mode (Node's libuv does on its
	// stdio), which takes FILE_WRITE_ATTRIBUTES on a read end.
	serverAccess, clientAccess := uint32(windows.PIPE_ACCESS_INBOUND), uint32(windows.GENERIC_WRITE|windows.FILE_READ_ATTRIBUTES)
	if childReads {
		serverAccess, clientAccess = windows.PIPE_ACCESS_OUTBOUND, windows.GENERIC_READ|windows.FILE_WRITE_ATTRIBUTES
	}
	server, err := windows.CreateNamedPipe(p,
		serverAccess|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, childPipeSize, childPipeSize, 0, &sa)
	if err != nil {
		return nil, nil, &os.SyscallError{Syscall: "CreateNamedPipe", Err: err}
	}
	client, err := windows.CreateFile(p, clientAccess, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		windows.CloseHandle(server)
		return nil, nil, &os.SyscallError{Syscall: "CreateFile", Err: err}
	}
	// The client is connected already: ConnectNamedPipe reports it.
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err == nil {
		ov := windows.Overlapped{HEvent: ev}
		err = windows.ConnectNamedPipe(server, &ov)
		if err == windows.ERROR_PIPE_CONNECTED {
			err = nil
		} else if err == windows.ERROR_IO_PENDING { // another client took the one instance
			windows.CancelIoEx(server, &ov)
			var n uint32
			windows.GetOverlappedResult(server, &ov, &n, true)
			err = windows.ERROR_PIPE_BUSY
		}
		windows.CloseHandle(ev)
	}
	if err != nil {
		windows.CloseHandle(client)
		windows.CloseHandle(server)
		return nil, nil, &os.SyscallError{Syscall: "ConnectNamedPipe", Err: err}
	}
	return os.NewFile(uintptr(server), "|parent"), os.NewFile(uintptr(client), "|child"), nil
}
