package mariadb

import "testing"

func TestParseRecovered(t *testing.T) {
	// Lines as MariaDB 10.11.19 + Galera 4.23 write them.
	log := `2026-11-22  4:04:06 0 [Warning] InnoDB: Skipping buffer pool dump/restore during wsrep recovery.
2026-11-22  4:04:06 0 [Note] WSREP: Recovered position: 9d0b3266-9635-55de-b9cc-48d418fde339:11
`
	u, s, err := ParseRecovered(log)
	if err != nil || u != "9d0b3266-9635-55de-b9cc-48d418fde339" || s != 11 {
		t.Fatalf("%s %d %v", u, s, err)
	}
	if _, _, err := ParseRecovered("InnoDB: Starting shutdown...\n"); err == nil {
		t.Fatal("no position accepted")
	}
	if _, s, _ := ParseRecovered("WSREP: Recovered position: 00000000-0000-0000-0000-000000000000:-1\n"); s != -1 {
		t.Fatalf("seqno %d", s)
	}
}
