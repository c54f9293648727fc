package netem

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// kernelPacket is a packet message as the kernel queues it: nlmsghdr,
// nfgenmsg, NFQA_PACKET_HDR and, when stamp is set, NFQA_TIMESTAMP.
func kernelPacket(id uint32, stamp time.Time) []byte {
	hdr := binary.BigEndian.AppendUint32(nil, id)
	hdr = append(hdr, 0x08, 0x00, 1) // hw_protocol, hook
	attrs := []attr{{attrPacketHdr, hdr}}
	if !stamp.IsZero() {
		ts := binary.BigEndian.AppendUint64(nil, uint64(stamp.Unix()))
		ts = binary.BigEndian.AppendUint64(ts, uint64(stamp.Nanosecond()/1000))
		attrs = append(attrs, attr{attrTimestamp, ts})
	}
	return message(msgPacket, 0, 7, attrs...)
}

func TestParseMessages(t *testing.T) {
	at := time.Unix(1_800_000_000, 123_456_000)
	errMsg := make([]byte, nlHdrLen+4)
	binary.NativeEndian.PutUint32(errMsg, uint32(len(errMsg)))
	binary.NativeEndian.PutUint16(errMsg[4:], unix.NLMSG_ERROR)
	cases := []struct {
		name  string
		dgram []byte
		want  []packet
	}{
		{"one stamped", kernelPacket(42, at), []packet{{id: 42, stamp: &at}}},
		{"no stamp", kernelPacket(7, time.Time{}), []packet{{id: 7}}},
		{"two in one datagram, an error between", append(append(kernelPacket(1, at), errMsg...), kernelPacket(2, time.Time{})...),
			[]packet{{id: 1, stamp: &at}, {id: 2}}},
		{"truncated", kernelPacket(9, at)[:nlHdrLen+6], nil},
		{"length past the end", append([]byte{0xff, 0xff, 0, 0}, kernelPacket(3, at)[4:]...), nil},
		{"empty", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseMessages(c.dgram, nil)
			if len(got) != len(c.want) {
				t.Fatalf("got %d packets %+v, want %d", len(got), got, len(c.want))
			}
			for i := range got {
				if got[i].id != c.want[i].id || (got[i].stamp == nil) != (c.want[i].stamp == nil) ||
					got[i].stamp != nil && !got[i].stamp.Equal(*c.want[i].stamp) {
					t.Errorf("packet %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// FuzzParseMessages: no datagram makes the parser panic or invent a
// packet without a header.
func FuzzParseMessages(f *testing.F) {
	f.Add(kernelPacket(1, time.Unix(1, 0)))
	f.Add(verdictMsg(3, 9, verdictAccept, true))
	f.Fuzz(func(t *testing.T, b []byte) { parseMessages(b, nil) })
}

func TestVerdictAndConfigMessages(t *testing.T) {
	v := verdictMsg(3, 0x01020304, verdictAccept, true)
	want := []byte{
		32, 0, 0, 0, // length
		3, 3, // NFQNL_MSG_VERDICT_BATCH of NFNL_SUBSYS_QUEUE
		1, 0, // NLM_F_REQUEST
		0, 0, 0, 0, 0, 0, 0, 0, // seq, pid
		0, 0, 0, 3, // AF_UNSPEC, v0, queue 3 (big-endian)
		12, 0, 2, 0, // NFQA_VERDICT_HDR, 12 bytes
		0, 0, 0, 1, 1, 2, 3, 4, // NF_ACCEPT, id (big-endian)
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("golden bytes are little-endian")
	}
	if !bytes.Equal(v, want) {
		t.Errorf("verdict batch message\n got %v\nwant %v", v, want)
	}
	if v := verdictMsg(3, 1, verdictDrop, false); v[4] != 1 || v[27] != verdictDrop || v[31] != 1 {
		t.Errorf("single drop verdict: %v", v)
	}
	if whole := configMsgs(5, 1000, true); whole[1][nlHdrLen+genHdrLen+8] != copyPacket || binary.BigEndian.Uint32(whole[2][nlHdrLen+genHdrLen+4:]) != 0 {
		t.Errorf("a corrupting queue copies the packet, cut into packets: %v", whole)
	}
	cfg := configMsgs(5, 1000, false)
	if len(cfg) != 3 {
		t.Fatalf("%d config messages", len(cfg))
	}
	for i, m := range cfg {
		if int(binary.NativeEndian.Uint32(m)) != len(m) || len(m)%4 != 0 || m[4] != msgConfig || m[5] != subsysQueue ||
			binary.NativeEndian.Uint16(m[6:])&unix.NLM_F_ACK == 0 || binary.BigEndian.Uint16(m[18:]) != 5 {
			t.Errorf("config message %d malformed: %v", i, m)
		}
	}
	if cfg[0][nlHdrLen+genHdrLen+4] != cmdBind {
		t.Errorf("first config message does not bind: %v", cfg[0])
	}
	// params: copy range 0xffff, copy mode meta (5 bytes, padded), then the
	// queue length.
	p := cfg[1][nlHdrLen+genHdrLen:]
	if binary.NativeEndian.Uint16(p) != 9 || !bytes.Equal(p[4:9], []byte{0, 0, 0xff, 0xff, copyMeta}) ||
		binary.NativeEndian.Uint16(p[14:]) != cfgMaxLen || binary.BigEndian.Uint32(p[16:]) != 1000 {
		t.Errorf("params message: %v", cfg[1])
	}
}

func TestArrival(t *testing.T) {
	now := time.Now()
	past, future, stale := now.Add(-3*time.Millisecond), now.Add(time.Millisecond), now.Add(-2*time.Second)
	for _, c := range []struct {
		stamp *time.Time
		want  time.Time
	}{{nil, now}, {&past, past}, {&future, now}, {&stale, now}} {
		if got := arrival(c.stamp, now); !got.Equal(c.want) {
			t.Errorf("arrival(%v) = %v, want %v", c.stamp, got, c.want)
		}
	}
}

// TestCorrupt: one bit of an IPv4 packet's transport segment flips, never
// of its IP header; a packet that is not IPv4 or has no segment is left.
func TestCorrupt(t *testing.T) {
	pkt := make([]byte, 48)
	pkt[0] = 0x45 // IPv4, 20-byte header
	for r := uint64(0); r < 8*28; r += 13 {
		p := bytes.Clone(pkt)
		if !Corrupt(p, r) {
			t.Fatal("not corrupted")
		}
		diff := 0
		for i := range p {
			if p[i] != pkt[i] {
				diff++
				if i < 20 {
					t.Errorf("r=%d flipped byte %d of the IP header", r, i)
				}
			}
		}
		if diff != 1 {
			t.Errorf("r=%d: %d bytes differ", r, diff)
		}
	}
	if Corrupt(make([]byte, 20), 1) || Corrupt(append([]byte{0x60}, make([]byte, 60)...), 1) {
		t.Error("a packet without a segment, or IPv6, corrupted")
	}
}
