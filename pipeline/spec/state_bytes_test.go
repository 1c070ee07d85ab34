package spec

import (
	"strings"
	"testing"
)

func TestMaxStateBytes(t *testing.T) {
	tests := []struct {
		value string
		want  int64
		err   string
	}{
		{value: "", want: 0},
		{value: "512MiB", want: 512 << 20},
		{value: "2GiB", want: 2 << 30},
		{value: "1.5GiB", want: 3 << 29},
		{value: "100MB", want: 100e6},
		{value: "65536", want: 65536},
		{value: "unlimited", want: -1},
		{value: "0", err: `p.yaml:3:18: max_state_bytes: 0 bytes would fail every stateful pipeline`},
		{value: "-1GiB", err: `p.yaml:3:18: max_state_bytes: want a size such as 512MiB or 2GiB, or unlimited, got "-1GiB"`},
		{value: "lots", err: `p.yaml:3:18: max_state_bytes: want a size such as 512MiB or 2GiB, or unlimited, got "lots"`},
		{value: "9999999PiB", err: `p.yaml:3:18: max_state_bytes: size "9999999PiB" is too large`},
	}
	for _, tt := range tests {
		src := ttlPipeline("", "")
		if tt.value != "" {
			src = strings.Replace(src, "name: p\n", "name: p\nmax_state_bytes: "+tt.value+"\n", 1)
		}
		p, err := Parse("p.yaml", []byte(src), env(nil))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("max_state_bytes %q: error %v, want %q", tt.value, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("max_state_bytes %q: %v", tt.value, err)
			continue
		}
		if p.MaxStateBytes != tt.want {
			t.Errorf("max_state_bytes %q = %d, want %d", tt.value, p.MaxStateBytes, tt.want)
		}
	}
}
