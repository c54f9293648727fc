package monitor

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// File is the scrapes of a run, in its directory (gzip: a second of a
// three-node lab's exporters is about 400 KB of text, 40 KB compressed).
const File = "exporters.txt.gz"

// Dialer connects from inside one of the lab's hosts.
type Dialer func(ctx context.Context, host, network, addr string) (net.Conn, error)

// Recorder scrapes every exporter of a lab once a second into a run's
// directory until Stop.
type Recorder struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	f      *os.File
	gz     *gzip.Writer
	err    error
	// Scrapes and Failed count each exporter's scrapes (by its name).
	scrapes, failed map[string]int
}

// Record starts scraping p's exporters into dir/File, every interval;
// nil when the lab has none.
func Record(p *plan.Plan, dial Dialer, dir string, every time.Duration) (*Recorder, error) {
	if len(p.Monitoring) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, File))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Recorder{cancel: cancel, f: f, gz: gzip.NewWriter(f), scrapes: map[string]int{}, failed: map[string]int{}}
	for _, e := range p.Monitoring {
		client := &http.Client{Timeout: every * 9 / 10, Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return dial(ctx, e.Host, network, addr)
			},
			DisableKeepAlives: false, MaxIdleConnsPerHost: 1}}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer client.CloseIdleConnections()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				r.scrape(ctx, client, e)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	return r, nil
}

// scrape fetches one exporter's metrics and appends them.
func (r *Recorder) scrape(ctx context.Context, c *http.Client, e plan.Exporter) {
	at := time.Now()
	body, err := fetch(ctx, c, e.URL())
	if ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scrapes[e.Name()]++
	if err != nil {
		r.failed[e.Name()]++
	}
	if werr := writeScrape(r.gz, e.Job, e.Instance, at, body, err); werr != nil && r.err == nil {
		r.err = werr
	}
}

func fetch(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %s", resp.Status)
	}
	return b, err
}

// Summary is how the scraping went: scrapes and failures per exporter.
type Summary struct {
	Exporters int            `json:"exporters"`
	Scrapes   int            `json:"scrapes"`
	Failed    map[string]int `json:"failed,omitempty"` // by exporter, those with failures
	Silent    []string       `json:"silent,omitempty"` // exporters whose every scrape failed
	File      string         `json:"file"`
}

// Stop ends the scraping and closes the file; Summary says how it went.
func (r *Recorder) Stop() (Summary, error) {
	if r == nil {
		return Summary{}, nil
	}
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{Exporters: len(r.scrapes), File: File}
	for name, n := range r.scrapes {
		s.Scrapes += n
		if r.failed[name] > 0 {
			if s.Failed == nil {
				s.Failed = map[string]int{}
			}
			s.Failed[name] = r.failed[name]
		}
		if n > 0 && r.failed[name] == n {
			s.Silent = append(s.Silent, name)
		}
	}
	sort.Strings(s.Silent)
	err := errors.Join(r.err, r.gz.Close(), r.f.Close())
	return s, err
}

// Open reads a run's scrapes (uncompressed); os.ErrNotExist when the run
// was recorded without monitoring.
func Open(runDir string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(runDir, File))
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", filepath.Join(runDir, File), err)
	}
	return readCloser{gz, f}, nil
}

type readCloser struct {
	*gzip.Reader
	f *os.File
}

func (r readCloser) Close() error { return errors.Join(r.Reader.Close(), r.f.Close()) }
