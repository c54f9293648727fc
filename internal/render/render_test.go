package render

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	if s, err := Text("t", "port = {{.Port}}\n", map[string]int{"Port": 3306}); err != nil || s != "port = 3306\n" {
		t.Errorf("%q %v", s, err)
	}
	if _, err := Text("my.cnf", "port = {{.Port}}\n", map[string]int{}); err == nil || !strings.Contains(err.Error(), "template my.cnf") {
		t.Errorf("a missing field renders as an error naming the template: %v", err)
	}
}
