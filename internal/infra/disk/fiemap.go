package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's FIEMAP interface (linux/fiemap.h): which blocks of its
// device hold a file's bytes.
const (
	fsIocFiemap       = 0xC020660B
	fiemapFlagSync    = 0x1
	fiemapHeader      = 32
	fiemapExtentSize  = 56
	fiemapMaxExtents  = 32
	extentUnknown     = 0x2
	extentDelalloc    = 0x4
	extentEncoded     = 0x8
	extentNotAligned  = 0x100
	extentDataInline  = 0x200
	extentUnwritten   = 0x800
	extentUnreadable  = extentUnknown | extentDelalloc | extentEncoded | extentNotAligned | extentDataInline
	errNotOnOneExtent = "spans two extents of the file system"
)

// ErrNotPlaced is what Locate returns for bytes without a fixed place on
// the device (a hole, never written, or in two places): the offset asked
// for, not the file system, is the problem.
var ErrNotPlaced = errors.New("no fixed place on the device")

// Locate is the offset on its file system's device of byte off of a file,
// and checks that bytes [off, off+n) lie there together (the file's dirty
// pages are written first) and, when written is set, have been written:
// the file system reads an allocated, never-written extent as zeros
// without reading the disk. A file system that does not map its blocks
// onto one device (btrfs) is not located here.
func Locate(path string, off, n int64, written bool) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, fiemapHeader+fiemapMaxExtents*fiemapExtentSize)
	binary.NativeEndian.PutUint64(buf[0:], uint64(off))
	binary.NativeEndian.PutUint64(buf[8:], uint64(n))
	binary.NativeEndian.PutUint32(buf[16:], fiemapFlagSync)
	binary.NativeEndian.PutUint32(buf[24:], fiemapMaxExtents)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
		return 0, fmt.Errorf("mapping %s onto its device: %w", path, e)
	}
	count := int(binary.NativeEndian.Uint32(buf[20:]))
	for i := range count {
		e := buf[fiemapHeader+i*fiemapExtentSize:]
		logical := int64(binary.NativeEndian.Uint64(e[0:]))
		physical := int64(binary.NativeEndian.Uint64(e[8:]))
		length := int64(binary.NativeEndian.Uint64(e[16:]))
		flags := binary.NativeEndian.Uint32(e[40:])
		if off < logical || off >= logical+length {
			continue
		}
		switch {
		case flags&extentUnreadable != 0:
			return 0, fmt.Errorf("%s: bytes %d+%d have %w (extent flags %#x)", path, off, n, ErrNotPlaced, flags)
		case written && flags&extentUnwritten != 0:
			return 0, fmt.Errorf("%s: bytes %d+%d are allocated but never written (the server reads zeros there without reading the disk): %w", path, off, n, ErrNotPlaced)
		case off+n > logical+length:
			return 0, fmt.Errorf("%s: bytes %d+%d %s: %w", path, off, n, errNotOnOneExtent, ErrNotPlaced)
		}
		return physical + off - logical, nil
	}
	return 0, fmt.Errorf("%s: bytes %d+%d are in a hole of the file (nothing written there): %w", path, off, n, ErrNotPlaced)
}
