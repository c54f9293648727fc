package netem

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hadrill/hadrill/internal/netns"
)

// The netfilter queue protocol (linux/netfilter/nfnetlink_queue.h): the
// few messages the daemon needs, read in batches with recvmmsg(2) so that a
// busy link costs one system call per burst of packets rather than two per
// packet.
const (
	subsysQueue  = 3 // NFNL_SUBSYS_QUEUE
	msgPacket    = 0 // NFQNL_MSG_PACKET
	msgConfig    = 2 // NFQNL_MSG_CONFIG
	msgVerdictBt = 3 // NFQNL_MSG_VERDICT_BATCH

	attrPacketHdr  = 1  // NFQA_PACKET_HDR
	attrVerdictHdr = 2  // NFQA_VERDICT_HDR
	attrTimestamp  = 4  // NFQA_TIMESTAMP
	attrPayload    = 10 // NFQA_PAYLOAD

	cfgCmd    = 1 // NFQA_CFG_CMD
	cfgParams = 2 // NFQA_CFG_PARAMS
	cfgMaxLen = 3 // NFQA_CFG_QUEUE_MAXLEN
	cfgMask   = 4 // NFQA_CFG_MASK
	cfgFlags  = 5 // NFQA_CFG_FLAGS

	cmdBind    = 1 // NFQNL_CFG_CMD_BIND
	copyMeta   = 1 // NFQNL_COPY_META: the packet's id and stamp, no payload
	copyPacket = 2 // NFQNL_COPY_PACKET: the packet too
	flagGSO    = 4 // NFQA_CFG_F_GSO: large segments are queued whole

	verdictDrop   = 0 // NF_DROP
	verdictAccept = 1 // NF_ACCEPT

	nlHdrLen  = unix.SizeofNlMsghdr
	genHdrLen = 4 // struct nfgenmsg
)

// queue is one bound netfilter queue: a netlink socket opened in a host's
// namespace.
type queue struct {
	fd  int
	num uint16
	seq uint32
	// buffers for recvmmsg
	bufs [][]byte
	iov  []unix.Iovec
	hdrs []unix.Mmsghdr
}

// batch is how many messages one recvmmsg reads at most.
const batch = 64

// openQueue binds queue num in namespace ns: packets are copied as
// metadata only (whole, one at a time: a large segment cut into packets,
// when whole is set), up to maxLen wait in the kernel.
func openQueue(ns string, num uint16, maxLen uint32, whole bool) (*queue, error) {
	q := &queue{fd: -1, num: num}
	err := netns.Do(ns, func() (err error) {
		q.fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netem: netlink socket in %s: %w", ns, err)
	}
	fail := func(what string, err error) (*queue, error) {
		q.Close()
		return nil, fmt.Errorf("netem: queue %d in %s: %s: %w", num, ns, what, err)
	}
	if err := unix.Bind(q.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fail("bind", err)
	}
	// Room for a burst, and no ENOBUFS error when it overflows anyway (the
	// kernel then drops the packet, as a full link would).
	_ = unix.SetsockoptInt(q.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
	_ = unix.SetsockoptInt(q.fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
	// The kernel answers a config request at once; packets are read with
	// MSG_DONTWAIT once ppoll says they are there.
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	_ = unix.SetsockoptTimeval(q.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	for _, m := range configMsgs(num, maxLen, whole) {
		if err := q.request(m); err != nil {
			return fail("configure", err)
		}
	}
	n, size := batch, 2048
	if whole {
		n, size = 8, 64<<10+512 // a packet of up to 64K and its attributes
	}
	q.bufs = make([][]byte, n)
	q.iov = make([]unix.Iovec, n)
	q.hdrs = make([]unix.Mmsghdr, n)
	for i := range q.bufs {
		q.bufs[i] = make([]byte, size)
		q.iov[i].Base = &q.bufs[i][0]
		q.iov[i].SetLen(len(q.bufs[i]))
		q.hdrs[i].Hdr.Iov = &q.iov[i]
		q.hdrs[i].Hdr.SetIovlen(1)
	}
	return q, nil
}

// Close unbinds the queue: the kernel drops what it still holds.
func (q *queue) Close() {
	if q.fd >= 0 {
		unix.Close(q.fd)
		q.fd = -1
	}
}

// request sends a config message and waits for the kernel's answer.
func (q *queue) request(m []byte) error {
	q.seq++
	binary.NativeEndian.PutUint32(m[8:], q.seq)
	if err := unix.Sendto(q.fd, m, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(q.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) {
			return errors.New("no answer from the kernel")
		}
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= nlHdrLen; {
			l := int(binary.NativeEndian.Uint32(b))
			if l < nlHdrLen || l > len(b) {
				break
			}
			if binary.NativeEndian.Uint16(b[4:]) == unix.NLMSG_ERROR && binary.NativeEndian.Uint32(b[8:]) == q.seq && l >= nlHdrLen+4 {
				if code := int32(binary.NativeEndian.Uint32(b[nlHdrLen:])); code != 0 {
					return unix.Errno(-code)
				}
				return nil
			}
			b = b[min(align(l), len(b)):]
		}
	}
}

// packet is what the daemon reads of a queued packet.
type packet struct {
	id    uint32
	stamp *time.Time // kernel receive time, when the kernel gave one
	// data is the packet (from its IP header) on a queue that copies it:
	// a view into the queue's buffer, valid until the next read.
	data []byte
}

// read appends the packets waiting on the queue, without blocking.
func (q *queue) read(out []packet) ([]packet, error) {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(q.fd), uintptr(unsafe.Pointer(&q.hdrs[0])), uintptr(len(q.hdrs)), unix.MSG_DONTWAIT, 0, 0)
		if errno == unix.EAGAIN || errno == unix.EINTR {
			return out, nil
		}
		if errno != 0 {
			return out, errno
		}
		for i := 0; i < int(n); i++ {
			out = parseMessages(q.bufs[i][:q.hdrs[i].Len], out)
		}
		if int(n) < len(q.hdrs) {
			return out, nil
		}
	}
}

// verdict sends v for packet id; batch=true applies it to every packet of
// the queue up to and including id.
func (q *queue) verdict(id uint32, v uint32, batch bool) error {
	m := verdictMsg(q.num, id, v, batch)
	return unix.Sendto(q.fd, m, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

// parseMessages appends the packets of one netlink datagram (errors and
// anything else the kernel sends are skipped).
func parseMessages(b []byte, out []packet) []packet {
	for len(b) >= nlHdrLen {
		l := int(binary.NativeEndian.Uint32(b))
		if l < nlHdrLen || l > len(b) {
			return out
		}
		if t := binary.NativeEndian.Uint16(b[4:]); t == subsysQueue<<8|msgPacket && l >= nlHdrLen+genHdrLen {
			if p, ok := parsePacket(b[nlHdrLen+genHdrLen : l]); ok {
				out = append(out, p)
			}
		}
		if align(l) >= len(b) {
			return out
		}
		b = b[align(l):]
	}
	return out
}

// parsePacket reads a packet message's attributes: its id (big-endian, in
// NFQA_PACKET_HDR) and its receive timestamp (NFQA_TIMESTAMP: seconds and
// microseconds, big-endian).
func parsePacket(attrs []byte) (packet, bool) {
	var p packet
	found := false
	for len(attrs) >= 4 {
		l := int(binary.NativeEndian.Uint16(attrs))
		t := binary.NativeEndian.Uint16(attrs[2:]) & 0x3fff // less the nested/byte-order flags
		if l < 4 || l > len(attrs) {
			break
		}
		v := attrs[4:l]
		switch {
		case t == attrPacketHdr && len(v) >= 4:
			p.id, found = binary.BigEndian.Uint32(v), true
		case t == attrPayload:
			p.data = v
		case t == attrTimestamp && len(v) >= 16:
			s := time.Unix(int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))*1000)
			p.stamp = &s
		}
		if align(l) >= len(attrs) {
			break
		}
		attrs = attrs[align(l):]
	}
	return p, found
}

func align(n int) int { return (n + 3) &^ 3 }

// message builds a netlink message of the queue subsystem: header, nfgenmsg
// for queue num, then the attributes given as (type, value) pairs.
func message(typ uint16, flags uint16, num uint16, attrs ...attr) []byte {
	m := make([]byte, nlHdrLen+genHdrLen, 64)
	binary.NativeEndian.PutUint16(m[4:], subsysQueue<<8|typ)
	binary.NativeEndian.PutUint16(m[6:], unix.NLM_F_REQUEST|flags)
	m[nlHdrLen] = unix.AF_UNSPEC
	m[nlHdrLen+1] = 0 // NFNETLINK_V0
	binary.BigEndian.PutUint16(m[nlHdrLen+2:], num)
	for _, a := range attrs {
		h := make([]byte, 4)
		binary.NativeEndian.PutUint16(h, uint16(4+len(a.v)))
		binary.NativeEndian.PutUint16(h[2:], a.t)
		m = append(m, h...)
		m = append(m, a.v...)
		m = append(m, make([]byte, align(len(a.v))-len(a.v))...)
	}
	binary.NativeEndian.PutUint32(m, uint32(len(m)))
	return m
}

type attr struct {
	t uint16
	v []byte
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// configMsgs binds queue num and sets how it copies packets (metadata,
// large segments queued whole; or, with whole, every packet in full, a
// large segment cut into packets first) and how many it holds.
func configMsgs(num uint16, maxLen uint32, whole bool) [][]byte {
	bind := []byte{cmdBind, 0, 0, 0} // command, pad, pf (unused by bind)
	params, flags := append(be32(0xffff), copyMeta), uint32(flagGSO)
	if whole {
		params, flags = append(be32(0xffff), copyPacket), 0
	}
	return [][]byte{
		message(msgConfig, unix.NLM_F_ACK, num, attr{cfgCmd, bind}),
		message(msgConfig, unix.NLM_F_ACK, num, attr{cfgParams, params}, attr{cfgMaxLen, be32(maxLen)}),
		message(msgConfig, unix.NLM_F_ACK, num, attr{cfgFlags, be32(flags)}, attr{cfgMask, be32(flagGSO)}),
	}
}

// accept accepts packet id with data in place of what it carried.
func (q *queue) accept(id uint32, data []byte) error {
	m := message(1, 0, q.num, attr{attrVerdictHdr, append(be32(verdictAccept), be32(id)...)}, attr{attrPayload, data})
	return unix.Sendto(q.fd, m, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

// Corrupt flips one bit, chosen by r (a number below 8 × the segment's
// length), of an IPv4 packet's transport segment (its header and data,
// which the transport's checksum covers); it says whether there was one.
func Corrupt(pkt []byte, r uint64) bool {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return false
	}
	ihl := int(pkt[0]&0x0f) * 4
	if ihl < 20 || len(pkt) <= ihl {
		return false
	}
	seg := pkt[ihl:]
	bit := r % uint64(8*len(seg))
	seg[bit/8] ^= 1 << (bit % 8)
	return true
}

// verdictMsg is the verdict v for packet id of queue num (batch: for every
// packet up to id).
func verdictMsg(num uint16, id uint32, v uint32, batch bool) []byte {
	typ := uint16(1) // NFQNL_MSG_VERDICT
	if batch {
		typ = msgVerdictBt
	}
	return message(typ, 0, num, attr{attrVerdictHdr, append(be32(v), be32(id)...)})
}
