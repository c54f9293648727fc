package netem

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// queueLen bounds the packets held per queue (kernel side): 100 ms at
// 20,000 packets/s is 2,000 in flight.
const queueLen = 1 << 16

// Daemon holds packets of every (namespace, link) queue of a lab for their
// link's current delay. Its links can be changed while it runs (Reload).
type Daemon struct {
	links atomic.Pointer[[]Link]
	log   io.Writer
	drops atomic.Int64
	// Fidelity: packets released, those released over 1 ms after their
	// due time, and the worst lateness (µs) since the last report.
	released, late atomic.Int64
	worstUs        atomic.Int64
	corrupted      atomic.Int64
}

// report logs, every 10 s while packets flow, how many came late.
func (d *Daemon) report(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, late, worst := d.released.Swap(0), d.late.Swap(0), d.worstUs.Swap(0)
			if n > 0 {
				fmt.Fprintf(d.log, "netem: %s released %d packets, %d over 1 ms late (worst %.2f ms), %d dropped (loss), %d corrupted\n",
					time.Now().Format("15:04:05"), n, late, float64(worst)/1000, d.drops.Swap(0), d.corrupted.Swap(0))
			}
		}
	}
}

// Run binds every queue of the config at path and serves until ctx ends.
// SIGHUP re-reads the links' impairments from the file. ready is called
// once every queue is bound. cgroup, when set, is the cpu cgroup the
// daemon runs in with its weight (JoinCgroup), made on the way in and
// removed on the way out.
func Run(ctx context.Context, path, cgroup string, log io.Writer, ready func()) error {
	cfg, err := Load(path)
	if err != nil {
		return err
	}
	if cgroup != "" {
		leave, err := JoinCgroup(cgroup)
		if err != nil {
			return err
		}
		defer leave()
	}
	d := &Daemon{log: log}
	d.links.Store(&cfg.Links)
	if c, err := stampPackets(); err != nil {
		fmt.Fprintf(log, "netem: kernel receive timestamps unavailable (%v): delays count from when a packet is read\n", err)
	} else {
		defer c.Close()
	}
	// Each link's loop blocks in ppoll(2) on an OS thread of its own, a call
	// that keeps its P until the runtime's monitor takes it back: a P per
	// link on top of the CPUs' means a loop coming back from its wait never
	// queues for one.
	runtime.GOMAXPROCS(runtime.NumCPU() + len(cfg.Links) + 1)
	queues := make([][]*queue, len(cfg.Links))
	var corrupting []*queue // every host's corrupting queue of every link
	closeAll := func() {
		for _, qs := range append(queues, corrupting) {
			for _, q := range qs {
				q.Close()
			}
		}
	}
	for _, r := range cfg.Queues() {
		if int(r.Queue) >= len(cfg.Links) {
			closeAll()
			return fmt.Errorf("netem: queue %d in %s has no link", r.Queue, r.Netns)
		}
		q, err := openQueue(r.Netns, cfg.QueueNum(r.Queue), queueLen, false)
		if err != nil {
			closeAll()
			return err
		}
		queues[r.Queue] = append(queues[r.Queue], q)
		cq, err := openQueue(r.Netns, cfg.CorruptQueueNum(r.Queue), queueLen, true)
		if err != nil {
			closeAll()
			return err
		}
		corrupting = append(corrupting, cq)
	}
	// On the way out: the loops stop, then the queues close.
	defer closeAll()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, qs := range queues {
		if len(qs) == 0 {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); d.serve(ctx, i, NewLane(uint64(i+1)), qs) }()
	}
	if len(corrupting) > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); d.corrupt(ctx, corrupting) }()
	}
	fmt.Fprintf(log, "netem: %d queues bound (and as many corrupting ones); links: %s\n", len(cfg.Queues()), describe(cfg.Links))
	go d.report(ctx)
	if ready != nil {
		ready()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			if c, err := Load(path); err != nil {
				fmt.Fprintf(log, "netem: reload: %v (keeping the current links)\n", err)
			} else if len(c.Links) != len(cfg.Links) {
				fmt.Fprintf(log, "netem: reload: the links changed in number; restart the daemon\n")
			} else {
				d.links.Store(&c.Links)
				fmt.Fprintf(log, "netem: reloaded: %s\n", describe(c.Links))
			}
		}
	}
}

func describe(links []Link) string {
	s := ""
	for i, k := range links {
		if i > 0 {
			s += "; "
		}
		s += k.Name + " " + k.Describe()
	}
	return s
}

// arrival is when the kernel queued the packet (its receive timestamp,
// see stampPackets), not when this daemon got round to reading it: on busy
// CPUs the reader runs milliseconds late, and a delay counted from the read
// would add that to the link. A stamp that is missing, in the future or
// over a second old (the wall clock was set) falls back to now.
func arrival(stamp *time.Time, now time.Time) time.Time {
	if stamp == nil || stamp.After(now) || now.Sub(*stamp) > time.Second {
		return now
	}
	return *stamp
}

// stampPackets asks the kernel to timestamp every packet it receives (the
// stamp reaches the queue as NFQA_TIMESTAMP): any socket asking for
// receive timestamps switches them on, for as long as it stays open.
func stampPackets() (io.Closer, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "timestamps"), nil
}

func (d *Daemon) account(late time.Duration) {
	d.released.Add(1)
	if late > time.Millisecond {
		d.late.Add(1)
	}
	if us := late.Microseconds(); us > d.worstUs.Load() {
		d.worstUs.Store(us)
	}
}

// early is how far ahead of its due time a packet may leave with the one
// being released: at high packet rates it turns many wake-ups and verdicts
// into one.
const early = 50 * time.Microsecond

// held is a packet waiting for its release.
type held struct {
	q       *queue
	id      uint32
	release time.Time
}

// serve is one link's loop, on an OS thread of its own: it waits in
// ppoll(2) for packets or for the next release, whichever comes first,
// admits what arrived into the link's lane (in arrival order, which is
// release order) and accepts what is due, with one batch verdict per queue.
// Nothing is handed between goroutines on the way.
func (d *Daemon) serve(ctx context.Context, link int, lane *Lane, qs []*queue) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The kernel may fire a sleeper's timer up to its slack late (50 µs by
	// default); 1 µs keeps the wake-up on time.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	fds := make([]unix.PollFd, len(qs))
	for i, q := range qs {
		fds[i] = unix.PollFd{Fd: int32(q.fd), Events: unix.POLLIN}
	}
	var fifo []held
	var pkts []packet
	for ctx.Err() == nil {
		wait := 50 * time.Millisecond // ctx is looked at least this often
		if len(fifo) > 0 {
			wait = min(wait, time.Until(fifo[0].release))
		}
		ts := unix.NsecToTimespec(int64(max(wait, 0))) // 0: only look
		if _, err := unix.Ppoll(fds, &ts, nil); err != nil {
			for i := range fds {
				fds[i].Revents = 0
			}
			if err != unix.EINTR {
				fmt.Fprintf(d.log, "netem: link %d: ppoll: %v\n", link, err)
				time.Sleep(10 * time.Millisecond)
			}
		}
		for i, q := range qs {
			if fds[i].Revents == 0 {
				continue
			}
			var err error
			pkts, err = q.read(pkts[:0])
			if err != nil && ctx.Err() == nil {
				fmt.Fprintf(d.log, "netem: link %d queue %d: %v\n", link, q.num, err)
			}
			links := *d.links.Load()
			now := time.Now()
			for _, p := range pkts {
				release, drop, ahead := lane.Admit(&links[link], arrival(p.stamp, now))
				if drop {
					d.drops.Add(1)
					_ = q.verdict(p.id, verdictDrop, false)
					continue
				}
				if ahead { // its own verdict now; a later batch verdict skips it, accepted already
					d.account(now.Sub(release))
					_ = q.verdict(p.id, verdictAccept, false)
					continue
				}
				fifo = append(fifo, held{q, p.id, release})
			}
		}
		fifo = d.release(fifo)
	}
}

// corrupt serves the corrupting queues: every packet the rules send there
// is accepted at once with one bit of its transport segment flipped.
func (d *Daemon) corrupt(ctx context.Context, qs []*queue) {
	fds := make([]unix.PollFd, len(qs))
	for i, q := range qs {
		fds[i] = unix.PollFd{Fd: int32(q.fd), Events: unix.POLLIN}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed))
	var pkts []packet
	for ctx.Err() == nil {
		if _, err := unix.Poll(fds, 50); err != nil {
			continue
		}
		for i, q := range qs {
			if fds[i].Revents == 0 {
				continue
			}
			var err error
			if pkts, err = q.read(pkts[:0]); err != nil && ctx.Err() == nil {
				fmt.Fprintf(d.log, "netem: corrupting queue %d: %v\n", q.num, err)
			}
			for _, p := range pkts {
				if Corrupt(p.data, rng.Uint64()) {
					d.corrupted.Add(1)
					_ = q.accept(p.id, p.data)
				} else {
					_ = q.verdict(p.id, verdictAccept, false)
				}
			}
		}
	}
}

// release accepts the packets at the head of fifo that are due (or due
// within early), per queue with one verdict for all of them, and returns
// the rest.
func (d *Daemon) release(fifo []held) []held {
	now := time.Now()
	horizon := now.Add(early)
	n := 0
	for n < len(fifo) && !fifo[n].release.After(horizon) {
		d.account(now.Sub(fifo[n].release))
		n++
	}
	if n == 0 {
		return fifo
	}
	var done [16]*queue
	seen := done[:0]
next:
	for i := n - 1; i >= 0; i-- {
		for _, q := range seen {
			if q == fifo[i].q {
				continue next
			}
		}
		seen = append(seen, fifo[i].q)
		_ = fifo[i].q.verdict(fifo[i].id, verdictAccept, true)
	}
	return fifo[n:]
}
