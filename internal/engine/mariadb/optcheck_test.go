package mariadb

import "testing"

func TestServerSays(t *testing.T) {
	out := `2026-11-27  3:37:25 0 [Warning] option 'wsrep_sync_wait': unsigned value 99 adjusted to 15
2026-11-27  3:37:25 0 [Warning] Could not increase number of max_open_files to more than 20000 (request: 33057)
2026-11-27  3:37:25 0 [ERROR] Buffered error: Unknown suffix ';' used for variable 'max_connections' (value '1; DROP'). Legal suffix characters are: K, M, G, T, P, E
2026-11-27  3:37:25 0 [ERROR] Buffered error: mariadbd: Error while setting value '1; DROP' to 'max_connections'
                      ALLOW_INVALID_DATES, ERROR_FOR_DIVISION_BY_ZERO, TRADITIONAL,
`
	want := "option 'wsrep_sync_wait': unsigned value 99 adjusted to 15; Unknown suffix ';' used for variable 'max_connections' (value '1; DROP'). Legal suffix characters are: K, M, G, T, P, E; Error while setting value '1; DROP' to 'max_connections'"
	if got := serverSays(out); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
