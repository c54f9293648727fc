// Package words writes figures and lists as a sentence does: "1 table",
// "20 tables", "1,000,000", "a, b and c", "a, b or c". Findings,
// refusals and help texts use it so they read alike.
package words

import (
	"fmt"
	"strings"
)

// Count is a count and its noun, the noun plural unless the count is one,
// the count with thousands separated ("1 table", "1,000 tables").
func Count(n int, noun string) string {
	return Thousands(int64(n)) + " " + Noun(n, noun)
}

// Noun is the noun as a count of n needs it ("table", "tables"; "query",
// "queries"), for a sentence that writes its figures without separators.
func Noun(n int, noun string) string {
	if n == 1 {
		return noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && stem != "" && !strings.ContainsRune("aeiou", rune(stem[len(stem)-1])) {
		return stem + "ies"
	}
	return noun + "s"
}

// Thousands writes n with thousands separated by commas ("1,000,000").
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// And joins items as a sentence does: "a", "a and b", "a, b and c".
func And(items []string) string { return join(items, "and") }

// Or joins items as a choice: "a", "a or b", "a, b or c".
func Or(items []string) string { return join(items, "or") }

func join(items []string, word string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + word + " " + items[len(items)-1]
}
