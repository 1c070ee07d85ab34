package spec

import (
	"strings"
	"testing"
)

func TestParallelism(t *testing.T) {
	tests := []struct {
		value string
		want  int
		err   string
	}{
		{value: "", want: 0}, // one worker per core, the planner's
		{value: "1", want: 1},
		{value: "3", want: 3},
		{value: "128", want: 128},
		{value: "0", err: `p.yaml:3:14: parallelism: want a number of workers from 1 to 128, got "0"`},
		{value: "129", err: `p.yaml:3:14: parallelism: want a number of workers from 1 to 128, got "129"`},
		{value: "many", err: `p.yaml:3:14: parallelism: want a number of workers from 1 to 128, got "many"`},
	}
	for _, tt := range tests {
		src := ttlPipeline("", "")
		if tt.value != "" {
			src = strings.Replace(src, "name: p\n", "name: p\nparallelism: "+tt.value+"\n", 1)
		}
		p, err := Parse("p.yaml", []byte(src), env(nil))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parallelism %q: error %v, want %q", tt.value, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parallelism %q: %v", tt.value, err)
			continue
		}
		if p.Parallelism != tt.want {
			t.Errorf("parallelism %q = %d, want %d", tt.value, p.Parallelism, tt.want)
		}
	}
}
