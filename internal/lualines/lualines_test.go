package lualines

import "testing"

func TestBreaks(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		open byte
	}{
		{"", 0, 0},
		{"a", 0, 0},
		{"a\nb", 1, 0},
		{"a\rb", 1, 0},
		{"a\r\nb", 1, 0},
		{"a\n\rb", 1, 0},
		{"a\n\nb", 2, 0},
		{"a\r\rb", 2, 0},
		{"a\r\n\rb", 2, 0},
		{"a\n", 1, '\n'},
		{"a\r", 1, '\r'},
		{"a\r\n", 1, 0},
		{"\n\n", 2, '\n'},
	} {
		n, open := Breaks(c.s)
		if n != c.n || open != c.open {
			t.Errorf("Breaks(%q) = %d, %q; want %d, %q", c.s, n, open, c.n, c.open)
		}
	}
}
