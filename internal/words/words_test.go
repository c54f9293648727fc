package words

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(0, "table"), "0 tables"},
		{Count(1, "table"), "1 table"},
		{Count(20, "table"), "20 tables"},
		{Count(5000000, "row"), "5,000,000 rows"},
		{Noun(1, "read"), "read"},
		{Noun(1000, "read"), "reads"},
		{Count(2, "query"), "2 queries"},
		{Count(1, "query"), "1 query"},
		{Count(3, "day"), "3 days"},
		{Thousands(999), "999"},
		{Thousands(1000), "1,000"},
		{Thousands(-1234567), "-1,234,567"},
		{And(nil), ""},
		{And([]string{"a"}), "a"},
		{And([]string{"a", "b"}), "a and b"},
		{And([]string{"a", "b", "c"}), "a, b and c"},
		{Or([]string{"a", "b", "c"}), "a, b or c"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
