package study

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// labLog is where a lab the study brought up says what it does (a heal's
// restarts, a joiner started again, a replica's IO thread restarted): into
// the log of the step running on it when that step keeps one, else
// nowhere. Safe for concurrent writes.
type labLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *labLog) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(b), nil
	}
	return s.w.Write(b)
}

// into sends the lab's messages to w until the returned func is called (a
// nil labLog, a lab the study did not make: nothing).
func (s *labLog) into(w io.Writer) (stop func()) {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.w = nil
		s.mu.Unlock()
	}
}

// stepLog is a step's log kept in memory (saved in its run's directory
// once the run exists), each line stamped with the time it was written.
type stepLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
	mid bool // the last write ended inside a line
	now func() time.Time
}

func (s *stepLog) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamp := s.now().UTC().Format("15:04:05.000 ")
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !s.mid {
			s.buf.WriteString(stamp)
		}
		s.buf.Write(line)
		s.mid = line[len(line)-1] != '\n'
	}
	return len(b), nil
}

// Bytes is the log so far.
func (s *stepLog) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}
