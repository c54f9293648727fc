package netem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	nfqueue "github.com/florianl/go-nfqueue/v2"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/hadrill/hadrill/internal/netns"
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
	loops          []*linkLoop
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
				fmt.Fprintf(d.log, "netem: %s released %d packets, %d over 1 ms late (worst %.2f ms), %d dropped (loss)\n",
					time.Now().Format("15:04:05"), n, late, float64(worst)/1000, d.drops.Swap(0))
			}
		}
	}
}

// Run binds every queue of the config at path and serves until ctx ends.
// SIGHUP re-reads the links' impairments from the file. ready is called
// once every queue is bound.
func Run(ctx context.Context, path string, log io.Writer, ready func()) error {
	cfg, err := Load(path)
	if err != nil {
		return err
	}
	d := &Daemon{log: log}
	d.links.Store(&cfg.Links)
	// A link's release loop sleeps in nanosleep(2), a blocking call that
	// keeps its P until the runtime's monitor takes it back (after up to
	// 10 ms when idle): a P per link on top of the CPUs' means no reader
	// and no other link ever waits for one.
	runtime.GOMAXPROCS(runtime.NumCPU() + len(cfg.Links) + 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	d.loops = make([]*linkLoop, len(cfg.Links))
	for i := range cfg.Links {
		d.loops[i] = &linkLoop{lane: NewLane(uint64(i + 1)), in: make(chan held, queueLen)}
		wg.Add(1)
		go func() { defer wg.Done(); d.release(ctx, d.loops[i].in) }()
	}
	for _, q := range cfg.Queues() {
		nf, err := open(q)
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		if err := d.serve(ctx, nf, q); err != nil {
			nf.Close()
			cancel()
			wg.Wait()
			return err
		}
		go func() { <-ctx.Done(); wg.Wait(); nf.Close() }()
	}
	fmt.Fprintf(log, "netem: %d queues bound; links: %s\n", len(cfg.Queues()), describe(cfg.Links))
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
			wg.Wait()
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

func open(q Rule) (*nfqueue.Nfqueue, error) {
	fd, err := unix.Open(filepath.Join(netns.Dir, q.Netns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("netem: namespace %s: %w", q.Netns, err)
	}
	defer unix.Close(fd)
	nf, err := nfqueue.Open(&nfqueue.Config{NetNS: fd, NfQueue: q.Queue, MaxQueueLen: queueLen,
		Copymode: nfqueue.NfQnlCopyMeta, AfFamily: unix.AF_INET, Flags: nfqueue.NfQaCfgFlagGSO,
		WriteTimeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("netem: queue %d in %s: %w", q.Queue, q.Netns, err)
	}
	_ = nf.SetOption(netlink.NoENOBUFS, true)
	_ = nf.Con.SetReadBuffer(16 << 20)
	return nf, nil
}

// linkLoop is one link's lane and the FIFO of its held packets (from all
// the queues of the link, in admission order).
type linkLoop struct {
	mu   sync.Mutex
	lane *Lane
	in   chan held
}

type held struct {
	nf      *nfqueue.Nfqueue
	id      uint32
	release time.Time
}

// serve admits each packet of one queue into its link's lane: dropped at
// once when lost, else queued for the link's release loop.
func (d *Daemon) serve(ctx context.Context, nf *nfqueue.Nfqueue, q Rule) error {
	loop := d.loops[q.Queue]
	hook := func(a nfqueue.Attribute) int {
		if a.PacketID == nil {
			return 0
		}
		links := *d.links.Load()
		loop.mu.Lock() // admission order is release order
		release, drop := loop.lane.Admit(&links[q.Queue], time.Now())
		if !drop {
			loop.in <- held{nf, *a.PacketID, release}
		}
		loop.mu.Unlock()
		if drop {
			d.drops.Add(1)
			_ = nf.SetVerdict(*a.PacketID, nfqueue.NfDrop)
		}
		return 0
	}
	errf := func(err error) int {
		var op *netlink.OpError
		if ctx.Err() != nil {
			return 1
		}
		if errors.As(err, &op) && (op.Timeout() || op.Temporary()) {
			return 0
		}
		if errors.Is(err, unix.ENOBUFS) {
			return 0
		}
		fmt.Fprintf(d.log, "netem: %s queue %d: %v\n", q.Host, q.Queue, err)
		return 0
	}
	if err := nf.RegisterWithErrorFunc(ctx, hook, errf); err != nil {
		return fmt.Errorf("netem: %s queue %d: %w", q.Host, q.Queue, err)
	}
	return nil
}

// early is how far ahead of its due time a packet may leave with the one
// being released: at high packet rates it turns many wake-ups and verdicts
// into one.
const early = 50 * time.Microsecond

// release hands a link's packets back in order when they are due; the
// packets due together leave with one batch verdict per queue.
func (d *Daemon) release(ctx context.Context, in chan held) {
	var pending *held
	var batch []held
	for {
		var h held
		if pending != nil {
			h, pending = *pending, nil
		} else {
			select {
			case h = <-in:
			case <-ctx.Done():
				return
			}
		}
		if w := time.Until(h.release); w > 0 {
			sleep(ctx, w)
		}
		batch = append(batch[:0], h)
		d.account(time.Since(h.release))
	drain:
		for {
			select {
			case n := <-in:
				if n.release.After(time.Now().Add(early)) {
					pending = &n
					break drain
				}
				batch = append(batch, n)
				d.account(time.Since(n.release))
			default:
				break drain
			}
		}
		verdicts(batch)
	}
}

// verdicts accepts the batch: per queue, every id up to its last one.
func verdicts(batch []held) {
	var done [16]*nfqueue.Nfqueue
	seen := done[:0]
next:
	for i := len(batch) - 1; i >= 0; i-- {
		for _, nf := range seen {
			if nf == batch[i].nf {
				continue next
			}
		}
		seen = append(seen, batch[i].nf)
		_ = batch[i].nf.SetVerdictBatch(batch[i].id, nfqueue.NfAccept)
	}
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

// sleep waits d with nanosleep(2): the runtime's timers wake up to a
// millisecond late (the poller waits in whole milliseconds), which would add
// up to 2 ms to every round trip; nanosleep is late by tens of µs. It wakes
// at least every 50 ms to notice ctx.
func sleep(ctx context.Context, d time.Duration) {
	end := time.Now().Add(d)
	for ctx.Err() == nil {
		left := time.Until(end)
		if left <= 0 {
			return
		}
		if left > 50*time.Millisecond {
			left = 50 * time.Millisecond
		}
		ts := unix.NsecToTimespec(int64(left))
		_ = unix.Nanosleep(&ts, nil)
	}
}
