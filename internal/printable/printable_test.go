package printable

import "testing"

func TestClip(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"plain", "invalid_grant", 64, "invalid_grant"},
		{"C0 and DEL", "a\x1b[2Jb\x07c\x7fd\r\ne\x00", 64, "a[2Jbcde"},
		{"C1, CSI among them", "a\u009b31mb\u0085c\u0080", 64, "a31mbc"},
		{"line and paragraph separators", "a\u2028b\u2029c", 64, "abc"},
		{"letters of any script", "émission 発行", 64, "émission 発行"},
		{"format characters stay, for %q to show", "a\u202eb", 64, "a\u202eb"},
		{"cut at n runes", "ééééé", 3, "ééé…"},
		{"controls count toward n", "\x1b\x1b\x1babc", 4, "a…"},
		{"exactly n", "abc", 3, "abc"},
		{"invalid UTF-8", "a\xffb", 64, "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clip(tt.in, tt.n); got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}

func FuzzClip(f *testing.F) {
	f.Add("a\x1b[2J\u009b\u2028b", 10)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n & 0xff
		got := []rune(Clip(s, n))
		if len(got) > n+1 {
			t.Fatalf("Clip(%q, %d) has %d runes", s, n, len(got))
		}
		for _, r := range got {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("Clip(%q, %d) = %q holds %U", s, n, string(got), r)
			}
		}
	})
}
