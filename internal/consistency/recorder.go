package consistency

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Recorder keeps a history as its clients run: every invocation and
// completion with its time from one monotonic clock (nanoseconds since
// the recorder started), in the order they happened.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	ops   []Op
	next  int // the next process number a client takes
}

// NewRecorder starts a history's clock.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Start is when the history's clock started (its operations' times are
// from it).
func (r *Recorder) Start() time.Time { return r.start }

// Process gives a client a process number of its own (a new one after an
// operation of unknown outcome).
func (r *Recorder) Process() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	return r.next - 1
}

// Record adds an operation at now, and returns it as recorded (f txn
// unless it says otherwise).
func (r *Recorder) Record(op Op) Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Time, op.Index = time.Since(r.start).Nanoseconds(), len(r.ops)
	if op.F == "" {
		op.F = FTxn
	}
	r.ops = append(r.ops, op)
	return op
}

// Ops are the operations so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Write writes a history as JSON Lines.
func Write(w io.Writer, ops []Op) error {
	b := bufio.NewWriter(w)
	enc := json.NewEncoder(b)
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	return b.Flush()
}
