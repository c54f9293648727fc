package mariadb

import "testing"

func TestNativeHash(t *testing.T) {
	// SELECT PASSWORD('password') on MariaDB 10.11
	if got := NativeHash("password"); got != "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19" {
		t.Fatalf("NativeHash(password) = %s", got)
	}
}
