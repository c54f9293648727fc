package study

import (
	"io"
	"sync"
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
